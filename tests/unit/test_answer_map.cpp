// --map: which members of an answer go into which fields, and the object of mapped values the
// target then holds (typed as the answer has them; null for what it lacks).
#include "adapters/http/processor/answer_mapping.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

TEST_CASE("the mapped values keep their JSON types, in the map's order, null for a missing member", "[answer-map]") {
  answer_map m;
  parse_answer_map("country=/country,lat=/loc/lat,loc=/loc", "--map", m);
  parse_answer_map("first_tag=/tags/0,missing=/nope,odd=/a~1b", "--map", m);
  CHECK(m.names() == std::vector<std::string>{"country", "lat", "loc", "first_tag", "missing", "odd"});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(std::string(R"({"country":"FR","loc":{"lat":48.85,"lon":2.35},"tags":["x"],"a/b":true})")).get(doc));
  CHECK(mapped_object(m, doc) == R"({"country":"FR","lat":48.85,"loc":{"lat":48.85,"lon":2.35},"first_tag":"x","missing":null,"odd":true})");
}

TEST_CASE("a map that can't be followed is refused naming the flag", "[answer-map]") {
  answer_map m;
  CHECK_THROWS_WITH(parse_answer_map("country", "--map", m), Catch::Contains("NAME=/POINTER"));
  CHECK_THROWS_WITH(parse_answer_map("1st=/a", "--map", m), Catch::Contains("letters, digits"));
  CHECK_THROWS_WITH(parse_answer_map("a-b=/a", "--map", m), Catch::Contains("letters, digits"));
  CHECK_THROWS_WITH(parse_answer_map("a=country", "--map", m), Catch::Contains("starts with '/'"));
  CHECK_THROWS_WITH(parse_answer_map("a=/x,a=/y", "--map", m), Catch::Contains("mapped twice"));
}
