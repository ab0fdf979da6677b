// RFC 6901 JSON Pointers, parsed and evaluated on the RFC's own example document (section 5).
#include "adapters/http/processor/json_pointer_eval.hpp"

#include <catch2/catch.hpp>

using dibs::http::json_pointer;

namespace {
const char* rfc_example = R"({"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
                              "k\"l": 6, " ": 7, "m~n": 8})";

std::string at(const std::string& pointer) {
  static simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(std::string(rfc_example)).get(doc));
  const auto p = json_pointer::parse(pointer);
  REQUIRE(p);
  const auto v = dibs::http::evaluate(*p, doc);
  return v ? dibs::http::json_text(*v) : std::string("(none)");
}
}  // namespace

TEST_CASE("the RFC's examples evaluate as the RFC says", "[json-pointer]") {
  CHECK(at("") == R"({"foo":["bar","baz"],"":0,"a/b":1,"c%d":2,"e^f":3,"g|h":4,"i\\j":5,"k\"l":6," ":7,"m~n":8})");
  CHECK(at("/foo") == R"(["bar","baz"])");
  CHECK(at("/foo/0") == R"("bar")");
  CHECK(at("/") == "0");
  CHECK(at("/a~1b") == "1");
  CHECK(at("/c%d") == "2");
  CHECK(at("/e^f") == "3");
  CHECK(at("/g|h") == "4");
  CHECK(at("/i\\j") == "5");
  CHECK(at("/k\"l") == "6");
  CHECK(at("/ ") == "7");
  CHECK(at("/m~0n") == "8");
}

TEST_CASE("what names nothing is none: a missing member, an index past the end, a leading zero, '-'", "[json-pointer]") {
  CHECK(at("/nope") == "(none)");
  CHECK(at("/foo/2") == "(none)");
  CHECK(at("/foo/01") == "(none)");
  CHECK(at("/foo/-") == "(none)");
  CHECK(at("/foo/0/x") == "(none)");
  CHECK(at("/a/b") == "(none)");  // "a/b" is named "/a~1b"
}

TEST_CASE("a pointer that is no pointer is refused with the reason", "[json-pointer]") {
  std::string why;
  CHECK_FALSE(json_pointer::parse("country", &why));
  CHECK_THAT(why, Catch::Contains("starts with '/'"));
  CHECK_FALSE(json_pointer::parse("/a~2b", &why));
  CHECK_THAT(why, Catch::Contains("'~'"));
  CHECK_FALSE(json_pointer::parse("/a~", &why));
  CHECK(json_pointer::parse("/~01")->tokens() == std::vector<std::string>{"~1"});  // ~0 first, then the 1
}

TEST_CASE("a string's plain text is its own, any other value its JSON", "[json-pointer]") {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(std::string(R"({"s": "a\"b", "n": 1.50, "t": false})")).get(doc));
  CHECK(dibs::http::plain_text(*dibs::http::evaluate(*json_pointer::parse("/s"), doc)) == "a\"b");
  CHECK(dibs::http::plain_text(*dibs::http::evaluate(*json_pointer::parse("/t"), doc)) == "false");
}
