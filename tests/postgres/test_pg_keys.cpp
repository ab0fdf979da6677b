// The user's own PostgreSQL table keyed as real tables are: dibs claims, fences and deletes by the
// user's primary key whatever its type (tests/support/sql_key_case.hpp), and refuses, at init and
// at start, a table whose rows it can't address by one key.
#include "postgres/pg_env.hpp"
#include "support/sql_key_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
const auto dialect = test::this_backend().dialect();
}  // namespace

TEST_CASE("a PostgreSQL table keyed by uuid is onboarded by dibs init and drained", "[postgres][keys]") {
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_uuid"), "id", "uuid",
                          {"'0b7d6c1e-4b7a-4d2e-9f3c-1a2b3c4d5e6f'", "gen_random_uuid()", "gen_random_uuid()",
                           "'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'"});
}

TEST_CASE("PostgreSQL tables keyed by text and varchar(12) are onboarded and drained", "[postgres][keys]") {
  const std::vector<std::string> keys{"'A-17'", "'o''brien'", "'back\\slash'", "'Zürich-1'", "'{brace}'", "'a,b'",
                                      "'quote\"d'", "'NULL'", "'07'", "'7'", "' padded '"};
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_text"), "id", "text", keys);  // named id, as dibs's own was
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_vc"), "code", "varchar(12)", keys);
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_char"), "code", "char(12)", {"'ab'", "'cd  x'"});
}

TEST_CASE("PostgreSQL tables keyed by bigint (19-digit and negative ids), integer, numeric and bytea are drained", "[postgres][keys]") {
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_big"), "id", "bigint",
                          {"1000000000000000001", "9223372036854775807", "-5", "-9223372036854775808", "0"});
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_int"), "id", "integer",
                          {"2147483647", "-2147483648", "-5"});
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_num"), "id", "numeric(30,2)",
                          {"12.50", "-0.01", "1234567890123456789012345678.99"});
  test::check_keyed_table(dialect, test::unique_pg_table("keyed_bytes"), "id", "bytea",
                          {"'\\x0b7d6c1e'", "'\\x00ff'"});
}

TEST_CASE("a PostgreSQL table dibs can't address by one key is refused at init and at start", "[postgres][keys]") {
  const auto composite = test::unique_pg_table("keyed_pair");
  test::check_unaddressable_table(
      dialect, composite,
      {"CREATE TABLE " + composite + " (id INT NOT NULL, region VARCHAR(8) NOT NULL, ip VARCHAR(64), PRIMARY KEY (id, region))",
       "INSERT INTO " + composite + " VALUES (1, 'eu', '8.8.8.8'), (1, 'us', '8.8.4.4')"},
      "table " + composite + " has no key dibs can address its rows by: its primary key has 2 columns (id, region)",
      "ALTER TABLE \"" + composite + "\" ADD UNIQUE (\"id\")");
  const auto keyless = test::unique_pg_table("keyed_none");
  test::check_unaddressable_table(
      dialect, keyless,
      {"CREATE TABLE " + keyless + " (id INT NOT NULL, ip VARCHAR(64))",
       "INSERT INTO " + keyless + " VALUES (1, '8.8.8.8'), (1, '8.8.4.4')"},
      "table " + keyless + " has no key dibs can address its rows by: it has no primary key",
      "ALTER TABLE \"" + keyless + "\" ADD UNIQUE (\"id\")");
}
