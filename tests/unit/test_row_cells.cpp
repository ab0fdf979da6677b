// A SQL row's cells as a request's fields, by the column's type: the common types read as the
// server writes them (no JSON built or parsed), the others from the server's {"v": value}.
#include "adapters/sql/row_fields.hpp"

#include <catch2/catch.hpp>

using namespace dibs;
using namespace dibs::sql_common;

namespace {
job_field cell(const char* type, std::optional<std::string> text) { return field_of_cell("c", text, cell_kind_of(type)); }
}  // namespace

TEST_CASE("a cell reads as its column's type: text, number, boolean, JSON, or the server's wrapping", "[row-cells]") {
  CHECK(cell_kind_of("VARCHAR") == cell_kind::text);
  CHECK(cell_kind_of("int4") == cell_kind::number);
  CHECK(cell_kind_of("bool") == cell_kind::boolean);
  CHECK(cell_kind_of("jsonb") == cell_kind::json);
  CHECK(cell_kind_of("longtext") == cell_kind::wrapped);  // MariaDB's JSON: the server knows which
  CHECK(cell_kind_of("timestamp") == cell_kind::wrapped);

  auto f = cell("varchar", std::string("Caf\xC3\xA9 \"Zur\""));
  CHECK(f.st == job_field::state::string);
  CHECK(f.value == "Caf\xC3\xA9 \"Zur\"");
  f = cell("int", std::string("-42"));
  CHECK(f.st == job_field::state::not_string);
  CHECK(f.json == "-42");
  CHECK(cell("numeric", std::string("12.50")).json == "12.50");
  CHECK(cell("int", std::string("007")).json == "7");          // MySQL's ZEROFILL
  CHECK(cell("decimal", std::string("00.50")).json == "0.50");
  CHECK(cell("int", std::string("000")).json == "0");
  CHECK(cell_kind_of("bpchar") == cell_kind::wrapped);          // its padding kept by the server's JSON
  f = cell("float8", std::string("NaN"));  // no JSON number: its text as a string
  CHECK(f.st == job_field::state::string);
  CHECK(f.value == "NaN");
  CHECK(cell("bool", std::string("t")).json == "true");
  CHECK(cell("bool", std::string("f")).json == "false");
  f = cell("jsonb", std::string(R"({"n": 1, "tags": ["a"]})"));
  CHECK(f.type_name == "an object");
  CHECK(f.json == R"({"n": 1, "tags": ["a"]})");
  f = cell("json", std::string(R"("a \"quoted\" string")"));  // a JSON string scalar: its text
  CHECK(f.st == job_field::state::string);
  CHECK(f.value == "a \"quoted\" string");
  CHECK(cell("json", std::string("null")).st == job_field::state::missing);
  f = cell("datetime", std::string(R"({"v": "2024-01-02T03:04:05"})"));
  CHECK(f.st == job_field::state::string);
  CHECK(f.value == "2024-01-02T03:04:05");
  f = cell("longtext", std::string(R"({"v": {"a": [1, 2]}})"));
  CHECK(f.json == R"({"a": [1, 2]})");
  CHECK(cell("varchar", std::nullopt).st == job_field::state::missing);
  CHECK(cell("int", std::nullopt).st == job_field::state::missing);
}

TEST_CASE("a claimed row's typed cells become its fields, a JSON source read in its place", "[row-cells]") {
  typed_read read{{"meta", "title"}, {cell_kind::json, cell_kind::text}, true};
  job j;
  job_field source;
  source.name = "meta";
  source.st = job_field::state::string;
  source.value = R"({"x":1})";
  j.fields.push_back(source);
  std::vector<std::optional<std::string>> row{std::string("7"), std::string(R"({"x":1})"), std::string(R"({"x":1})"),
                                                    std::string("T")};
  j = with_typed_cells(std::move(j), row, 2, read);
  REQUIRE(j.fields.size() == 2);
  CHECK(j.fields[0].name == "meta");
  CHECK(j.fields[0].st == job_field::state::not_string);  // the object, not a string of its text
  CHECK(j.fields[1].name == "title");
  CHECK(j.fields[1].value == "T");
}
