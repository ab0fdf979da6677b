// Which column a SQL store addresses rows by, and how an id becomes that key again in a
// statement, decided without a server (row_key_pick.hpp, adapters/mysql/mysql_row_key.hpp,
// adapters/postgres/pg_row_key.hpp).
#include <adapters/mysql/mysql_row_key.hpp>
#include <adapters/postgres/pg_row_key.hpp>

#include "engine/src/row_key_pick.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
const std::string make_unique = "ALTER TABLE t ADD UNIQUE (id)";
key_column_facts col(std::string name, bool not_null = true, std::string unusable = "") {
  return {std::move(name), not_null, std::move(unusable)};
}
}  // namespace

TEST_CASE("a table's rows are addressed by its one-column primary key, whatever its name", "[unit][keys]") {
  const auto pick = pick_row_key("people", {col("code"), col("ip", false)}, {{true, {"code"}}}, false, make_unique);
  CHECK(pick.column == "code");
  CHECK(pick.primary);
  CHECK_FALSE(pick.add_id);
  CHECK(pick.refusal.empty());
  // MySQL names compare without case; the column keeps its own spelling.
  CHECK(pick_row_key("people", {col("Code")}, {{true, {"CODE"}}}, true, make_unique).column == "Code");
}

TEST_CASE("without a usable primary key, a unique NOT NULL id keys the rows, else dibs init adds one", "[unit][keys]") {
  // A composite primary key and dibs's own unique id (what init added).
  auto pick = pick_row_key("t", {col("a"), col("b"), col("id")}, {{true, {"a", "b"}}, {false, {"id"}}}, false, make_unique);
  CHECK(pick.column == "id");
  CHECK_FALSE(pick.primary);
  // A primary key dibs can't compare exactly (a FLOAT): the same.
  pick = pick_row_key("t", {col("f", true, "a FLOAT"), col("id")}, {{true, {"f"}}, {false, {"id"}}}, false, make_unique);
  CHECK(pick.column == "id");
  // No key at all and no id: init adds one.
  pick = pick_row_key("t", {col("ip")}, {}, false, make_unique);
  CHECK_FALSE(pick.found());
  CHECK(pick.add_id);
  CHECK(pick.refusal.empty());
  pick = pick_row_key("t", {col("a"), col("b")}, {{true, {"a", "b"}}}, false, make_unique);
  CHECK(pick.add_id);
}

TEST_CASE("a table with an id dibs can't use as its key is refused with why and what to run", "[unit][keys]") {
  auto pick = pick_row_key("t", {col("id"), col("ip")}, {}, false, make_unique);
  CHECK_FALSE(pick.found());
  CHECK_FALSE(pick.add_id);
  CHECK(pick.refusal ==
        "table t has no key dibs can address its rows by: it has no primary key, and its column id is not unique by itself; "
        "give it a one-column primary key, or make id a unique NOT NULL key: ALTER TABLE t ADD UNIQUE (id)");
  pick = pick_row_key("t", {col("id"), col("region")}, {{true, {"id", "region"}}}, false, make_unique);
  CHECK_THAT(pick.refusal, Catch::Contains("its primary key has 2 columns (id, region), and its column id is not unique"));
  pick = pick_row_key("t", {col("id", false)}, {{false, {"id"}}}, false, make_unique);
  CHECK_THAT(pick.refusal, Catch::Contains("it has no primary key, and its column id may be NULL"));
  pick = pick_row_key("t", {col("f", true, "a DOUBLE, which dibs can't compare exactly"), col("id", true, "a DOUBLE, which dibs can't compare exactly")},
                      {{true, {"f"}}, {false, {"id"}}}, false, make_unique);
  CHECK_THAT(pick.refusal, Catch::Contains("its primary key f is a DOUBLE, which dibs can't compare exactly, and its column id is a DOUBLE"));
}

TEST_CASE("MySQL: a key's type says how its ids go back into a statement", "[unit][keys][mysql]") {
  using namespace dibs::mysql;
  const auto quote = [](const std::string& v) { return "'" + v + "'"; };
  CHECK(kind_of("bigint", "bigint(20)") == key_kind::signed_integer);
  CHECK(kind_of("BIGINT", "bigint(20) unsigned") == key_kind::unsigned_integer);
  CHECK(kind_of("varchar", "varchar(12)") == key_kind::text);
  CHECK(kind_of("uuid", "uuid") == key_kind::text);
  CHECK(kind_of("binary", "binary(16)") == key_kind::binary);
  CHECK(kind_of("decimal", "decimal(30,2)") == key_kind::decimal);
  CHECK_FALSE(kind_of("double", "double"));
  CHECK(unusable_key("float", "float") == "a float, which dibs can't compare exactly");
  CHECK(unusable_key("int", "int(11)").empty());

  const row_key sint{"id", key_kind::signed_integer, true};
  CHECK(key_literal(sint, "-5", quote) == "-5");
  CHECK(key_literal(sint, "9223372036854775807", quote) == "9223372036854775807");
  CHECK(key_literal(sint, "-9223372036854775808", quote) == "-9223372036854775808");
  for (const char* odd : {"", "007", "+7", "-0", " 7", "9223372036854775808", "1e3", "7'; DROP TABLE t; --"})
    CHECK_FALSE(key_literal(sint, odd, quote));
  const row_key uint{"id", key_kind::unsigned_integer, true};
  CHECK(key_literal(uint, "18446744073709551615", quote) == "18446744073709551615");
  CHECK_FALSE(key_literal(uint, "-5", quote));
  const row_key dec{"id", key_kind::decimal, true};
  CHECK(key_literal(dec, "-0.01", quote) == "-0.01");
  CHECK(key_literal(dec, "12", quote) == "12");
  for (const char* odd : {"", ".5", "5.", "1e3", "--1", "1.2.3"}) CHECK_FALSE(key_literal(dec, odd, quote));
  const row_key bin{"id", key_kind::binary, true};
  CHECK(key_literal(bin, "0B7D", quote) == "X'0B7D'");
  for (const char* odd : {"", "0B7", "0b7d", "XYZW"}) CHECK_FALSE(key_literal(bin, odd, quote));
  CHECK(key_text(bin, "MIN(`id`)") == "HEX(MIN(`id`))");
  // Text keys are quoted by the connection (which knows the server's escaping), whatever they hold.
  const row_key text{"code", key_kind::text, true};
  CHECK(key_literal(text, "007", quote) == "'007'");
  CHECK(key_literal(text, "", quote) == "''");
}

TEST_CASE("MySQL: the catalog's rows become the facts the key pick weighs", "[unit][keys][mysql]") {
  using namespace dibs::mysql;
  const std::vector<catalog_row> columns{{"code", "varchar", "varchar(12)", "NO"}, {"score", "double", "double", "YES"}};
  const auto facts = key_columns(columns);
  REQUIRE(facts.size() == 2);
  CHECK(facts[0].not_null);
  CHECK(facts[0].unusable.empty());
  CHECK_FALSE(facts[1].not_null);
  CHECK_THAT(facts[1].unusable, Catch::StartsWith("a double"));
  const auto keys = unique_keys({{"PRIMARY", "a"}, {"PRIMARY", "b"}, {"code_u", "code"}});
  REQUIRE(keys.size() == 2);
  CHECK(keys[0].primary);
  CHECK(keys[0].columns == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(keys[1].primary);
  const auto k = key_of(row_key_pick{"code", false, false, ""}, columns);
  CHECK(k.column == "code");
  CHECK(k.kind == key_kind::text);
  CHECK_FALSE(k.primary);
}

TEST_CASE("PostgreSQL: ids travel as text cast to the key's own type, and integer ids are checked first", "[unit][keys][pg]") {
  using namespace dibs::pg;
  const std::vector<catalog_row> columns{{"id", "uuid", "uuid", "uuid", "t"},
                                         {"code", "character", "bpchar", "character(12)", "t"},
                                         {"n", "integer", "int4", "integer", "f"},
                                         {"v", "character varying", "varchar", "character varying(12)", "t"}};
  CHECK(key_of(row_key_pick{"id", true, false, ""}, columns).type == "uuid");
  CHECK(key_of(row_key_pick{"id", true, false, ""}, columns).integer_bits == 0);
  CHECK(key_of(row_key_pick{"code", true, false, ""}, columns).type == "bpchar");  // never char(1)
  CHECK(key_of(row_key_pick{"v", true, false, ""}, columns).type == "character varying");  // never cut to 12
  CHECK(key_of(row_key_pick{"n", true, false, ""}, columns).integer_bits == 32);
  CHECK_FALSE(key_columns(columns)[2].not_null);

  const row_key big{};
  CHECK(key_accepts(big, "9223372036854775807"));
  CHECK(key_accepts(big, "-5"));
  CHECK(key_accepts(big, "1000000000000000001"));
  for (const char* odd : {"", "007", "+7", "9223372036854775808", "4x", "-0"}) CHECK_FALSE(key_accepts(big, odd));
  const row_key small{"n", "integer", 32};
  CHECK(key_accepts(small, "-2147483648"));
  CHECK_FALSE(key_accepts(small, "2147483648"));
  CHECK(key_accepts(row_key{"id", "uuid", 0}, "anything: the cast judges"));
  const auto keys = unique_keys({{"16390", "t", "id"}, {"16392", "f", "a"}, {"16392", "f", "b"}});
  REQUIRE(keys.size() == 2);
  CHECK(keys[0].primary);
  CHECK(keys[1].columns == std::vector<std::string>{"a", "b"});
}
