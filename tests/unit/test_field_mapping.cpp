// --map's text as records keep it: split into names, pointers and SQL types; the types checked
// before dibs init writes them into a statement; the names checked against the store's own; the
// rule that a mapping not given is the record's.
#include <dibs/field_mapping.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("a mapping splits at the commas outside a type's parentheses, a known type read off its pointer", "[field-mapping]") {
  const auto parts = split_mapping("country=/country:VARCHAR(64),price=/p:NUMERIC(10, 2),lat=/loc/lat:double precision,"
                                   "raw=/a:b,tz=/x:TIMESTAMPTZ,plain=/y",
                                   "--map");
  REQUIRE(parts.size() == 6);
  CHECK(parts[0].name == "country");
  CHECK(parts[0].pointer == "/country");
  CHECK(parts[0].column_type == "VARCHAR(64)");
  CHECK(parts[1].pointer == "/p");
  CHECK(parts[1].column_type == "NUMERIC(10, 2)");
  CHECK(parts[2].column_type == "double precision");
  CHECK(parts[3].pointer == "/a:b");  // 'b' is no type: the colon is the member's
  CHECK(parts[3].column_type.empty());
  CHECK(parts[4].column_type == "TIMESTAMPTZ");
  CHECK(parts[5].column_type.empty());
  CHECK_THROWS_WITH(split_mapping("country", "--map"), Catch::Contains("NAME=/POINTER"));
}

TEST_CASE("a column type is a known type's words and a size, nothing a statement could be bent by", "[field-mapping]") {
  for (const char* ok : {"TEXT", "varchar(255)", "DOUBLE PRECISION", "NUMERIC(10,2)", "jsonb", "JSON", "BIGINT", "int4",
                         "TIMESTAMP", "character varying(40)", "BOOLEAN"})
    CHECK(is_column_type(ok));
  for (const char* ok : {"timestamp(3) with time zone", "BIGINT UNSIGNED", "character varying(40)", "Double Precision"})
    CHECK(is_column_type(ok));
  for (const char* bad : {"", "BLOB", "TEXT; DROP TABLE t", "VARCHAR(64))", "VARCHAR(", "INT DEFAULT 1", "NUMERIC(1,2,3)",
                          "TEXT -- x", "VARCHAR(9999999)", "(64)", "b", "INT PRIMARY KEY", "TEXT UNIQUE", "INT NOT NULL",
                          "BIGINT REFERENCES users ON DELETE CASCADE", "BIGINT GENERATED ALWAYS AS IDENTITY",
                          "VARCHAR(10)(20)", "TEXT COLLATE C"})
    CHECK_FALSE(is_column_type(bad));
  CHECK_FALSE(is_column_type("TEXT NOT NULL DEFAULT x'00'"));
}

TEST_CASE("a record keeps names and pointers, without the types", "[field-mapping]") {
  CHECK(recorded_mapping("country=/country:VARCHAR(64),lat=/loc/lat:NUMERIC(9,6)") == "country=/country,lat=/loc/lat");
  CHECK(recorded_mapping("") == "");
  // The names' order: the same mapping given in another order is the same record.
  CHECK(recorded_mapping("lat=/loc/lat,country=/country") == "country=/country,lat=/loc/lat");
  // A pointer whose last member looks like a type, given a type: the record keeps the pointer,
  // and a record is read without types (its pointer is the member's).
  const auto kept = recorded_mapping("a=/meta:text:TEXT");
  CHECK(kept == "a=/meta:text");
  REQUIRE(split_mapping(kept, "--map", false).size() == 1);
  CHECK(split_mapping(kept, "--map", false)[0].pointer == "/meta:text");
  // A pointer's own '(' does not hold the next part back.
  const auto parts = split_mapping("a=/x(,b=/y", "--map");
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].name == "b");
}

TEST_CASE("the mapping in effect: the one given, else dibs init's record, one contradicting the record refused",
          "[field-mapping]") {
  const settings_record record{{"source", "ip"}, {"map", "country=/country,lat=/loc/lat"}};
  settings_use use;
  use.read = true;

  auto from_record = resolve_mapping("", {}, use, record, "table t");
  CHECK(from_record.names == std::vector<std::string>{"country", "lat"});
  CHECK(from_record.types == std::vector<std::string>{"", ""});
  CHECK(from_record.recorded == "country=/country,lat=/loc/lat");

  use.given = {"map"};
  // The same mapping given with types (dibs init again): agreed, its types kept for the columns.
  auto same = resolve_mapping("country=/country:TEXT,lat=/loc/lat", {"country", "lat"}, use, record, "table t");
  CHECK(same.types == std::vector<std::string>{"TEXT", ""});
  CHECK_THROWS_AS(resolve_mapping("country=/cc", {"country"}, use, record, "table t"), setting_conflict);
  use.record = true;  // dibs init given another mapping records it
  CHECK(resolve_mapping("country=/cc", {"country"}, use, record, "table t").recorded == "country=/cc");

  settings_use program;  // a program's own options: the names it set, no record read
  auto own = resolve_mapping("", {"a", "b"}, program, record, "table t");
  CHECK(own.names == std::vector<std::string>{"a", "b"});
  CHECK(own.recorded.empty());
}

TEST_CASE("a mapped name that is the key, the source, the target or dibs's own is refused", "[field-mapping]") {
  const mapped_names_rules sql{"id", "ip", "geo", {}, "dibs_", true};
  CHECK_NOTHROW(check_mapped_names({"country", "lat"}, sql));
  CHECK_THROWS_WITH(check_mapped_names({"ID"}, sql), Catch::Contains("is the key"));
  CHECK_THROWS_WITH(check_mapped_names({"ip"}, sql), Catch::Contains("source"));
  CHECK_THROWS_WITH(check_mapped_names({"geo"}, sql), Catch::Contains("target"));
  CHECK_THROWS_WITH(check_mapped_names({"dibs_error"}, sql), Catch::Contains("dibs keeps its own"));
  CHECK_THROWS_WITH(check_mapped_names({"a", "A"}, sql), Catch::Contains("mapped twice"));
  CHECK_THROWS_WITH(check_mapped_names({"a;b"}, sql), Catch::Contains("letters, digits"));
  CHECK_THROWS_WITH(check_mapped_names({std::string(64, 'a')}, sql), Catch::Contains("at most 63"));

  // MongoDB: dotted source and target, the lock field, names compared exactly.
  const mapped_names_rules mongo{"_id", "req.ip", "geo", {"_dibs"}, "", false};
  CHECK_THROWS_WITH(check_mapped_names({"req"}, mongo), Catch::Contains("source"));  // $set req would replace the source
  CHECK_THROWS_WITH(check_mapped_names({"_dibs"}, mongo), Catch::Contains("dibs keeps its own"));
  CHECK_THROWS_WITH(check_mapped_names({"_id"}, mongo), Catch::Contains("is the key"));
  CHECK_NOTHROW(check_mapped_names({"Geo", "request"}, mongo));
}
