// What answers mean "no data for this item", for any API: a status, or a member's value.
#include "adapters/http/processor/no_data_verdict.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

namespace {
std::optional<std::string> verdict(const no_data_rules& r, const std::string& answer) {
  static simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(answer).get(doc));
  return no_data_by_member(r, doc);
}
}  // namespace

TEST_CASE("a member's value means no data: strings by their text, other values by their JSON", "[no-data]") {
  no_data_rules r;
  r.members.push_back(parse_member_is("/status=fail", "--no-data-when"));
  r.members.push_back(parse_member_is("/result/found=false", "--no-data-when"));
  CHECK(verdict(r, R"({"status":"fail","message":"private range"})") == std::string("the answer's /status is \"fail\" (private range)"));
  CHECK(verdict(r, R"({"result":{"found":false}})"));
  CHECK_FALSE(verdict(r, R"({"status":"success","result":{"found":true}})"));
  CHECK_FALSE(verdict(r, R"({"status":["fail"]})"));  // an array is no "fail"
}

TEST_CASE("a status means no data, and the item keeps the API's object or one saying the status", "[no-data]") {
  no_data_rules r;
  r.statuses = {404, 410};
  CHECK(r.by_status(404));
  CHECK_FALSE(r.by_status(200));
  CHECK(no_data_answer_json(404, R"({"error":"not found"})", true) == R"({"error":"not found"})");
  CHECK(no_data_answer_json(410, "Gone", false) == R"({"no_data":"HTTP 410"})");
}

TEST_CASE("a rule that is no POINTER=VALUE is refused naming the flag", "[no-data]") {
  CHECK_THROWS_WITH(parse_member_is("status=fail", "--no-data-when"), Catch::Contains("--no-data-when") && Catch::Contains("'/'"));
  CHECK_THROWS_WITH(parse_member_is("/status", "--no-data-when"), Catch::Contains("POINTER=VALUE"));
  CHECK(parse_member_is("/a=b=c", "x").equals == "b=c");
}
