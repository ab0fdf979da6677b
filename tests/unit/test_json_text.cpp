// The one JSON compactor (dibs/json_text.hpp), used by the HTTP processor, the batch answer
// splitter and the JSON Lines journal.
#include "engine/src/json_text.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

TEST_CASE("compact JSON: whitespace between tokens goes, strings and numbers stay byte for byte", "[json]") {
  const std::string pretty = "{\r\n\t\"a\" : [ 1.50e3 , \"x  y\" ],\n  \"b\": {\"c\": \"\\n\\\" }\"}\n}\n";
  CHECK(dibs::compact_json(pretty) == R"({"a":[1.50e3,"x  y"],"b":{"c":"\n\" }"}})");
  std::string in_place = pretty;
  dibs::compact_json_in_place(in_place);
  CHECK(in_place == dibs::compact_json(pretty));
}

TEST_CASE("compact JSON: never a raw newline or control character, even from text that is not JSON", "[json]") {
  // A raw newline inside a string (not valid JSON) is escaped, not kept: a record stays one line.
  CHECK(dibs::compact_json("{\"a\":\"x\ny\"}") == "{\"a\":\"x\\u000ay\"}");
  CHECK(dibs::compact_json(std::string("[\x01]")) == "[\\u0001]");
  // An escaped quote does not end the string; an escaped backslash before the quote does.
  CHECK(dibs::compact_json(R"(["a\" b", "c\\" , 1])") == R"(["a\" b","c\\",1])");
  std::string text = "\"unterminated \n";
  dibs::compact_json_in_place(text);
  CHECK(text.find('\n') == std::string::npos);
}

TEST_CASE("compact JSON in place: the same text as compact_json, whether it compacts where it lies or not", "[json]") {
  // In place while only whitespace goes; a control character met halfway hands the partly
  // compacted text to compact_json, which must give what it gives for the original.
  const std::vector<std::string> texts{
      "", "{}", "{ \"a\" : 1 }", "{\"city\":\"New South Wales\",\"n\": [1, 2 ,3]}",
      "{\n  \"a\": \"x\\\" y\",\n  \"b\": \"c\\\\\"  }\n",
      "{ \"a\": 1,\n \"b\": \"x\ny\" }",        // raw newline inside a string, after compacting began
      std::string("[ 1,\t2, \x01 ]"),           // raw control character outside a string
      "\"unterminated \n", "{\"a\":\"\\\\\\\"\" , \"b\" :2}"};
  for (const auto& t : texts) {
    std::string in_place = t;
    dibs::compact_json_in_place(in_place);
    CHECK(in_place == dibs::compact_json(t));
  }
}
