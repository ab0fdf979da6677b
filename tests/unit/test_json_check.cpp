#include <adapters/http/json_check.hpp>

#include <catch2/catch.hpp>

using dibs::http::check_json_object;

namespace {
dibs::http::json_check_result check(std::string body, std::size_t depth = 64,
                                    const std::vector<std::string>& capture = {"status", "message", "query"}) {
  static simdjson::ondemand::parser parser;  // reused, as each shard does
  return check_json_object(parser, body, depth, capture);
}
}  // namespace

TEST_CASE("a JSON object body is accepted and the members asked for read", "[json]") {
  auto r = check(R"({"status":"success","country":"Germany","lat":50.1,"n":[1,2,{"a":null}],"ok":true})");
  CHECK(r.ok);
  CHECK(r.member("status") == "success");
  auto f = check(R"({"status":"fail","message":"private range","query":"10.0.0.1"})");
  CHECK(f.ok);
  CHECK(f.member("status") == "fail");
  CHECK(f.member("message") == "private range");
  CHECK(check("  {}  \n").ok);
  // Only what is asked for, and only strings: the check knows no API's words.
  auto g = check(R"({"status":"fail","code":7,"country":"DE"})", 64, {"country", "code"});
  CHECK(g.member("country") == "DE");
  CHECK_FALSE(g.member("status"));
  CHECK_FALSE(g.member("code"));
}

TEST_CASE("invalid, truncated and non-object bodies are refused with a reason", "[json]") {
  CHECK_THAT(check(R"({"status":"success","country":)").error, Catch::Contains("invalid JSON"));
  CHECK_THAT(check("").error, Catch::Contains("invalid JSON"));
  CHECK_THAT(check("<html>oops</html>").error, Catch::Contains("invalid JSON"));
  CHECK(check("[1,2,3]").error == "the body is JSON but not an object");
  CHECK(check("\"text\"").error == "the body is JSON but not an object");
  CHECK(check("42").error == "the body is JSON but not an object");
  CHECK_THAT(check(R"({"a":1} {"b":2})").error, Catch::Contains("after the object"));
  CHECK_THAT(check(R"({"a":tru})").error, Catch::Contains("invalid JSON"));
  CHECK_THAT(check(R"({"a":"\x"})").error, Catch::Contains("invalid JSON"));
  CHECK_THAT(check("{\"a\":\"\xff\xfe\"}").error, Catch::Contains("invalid JSON"));
  CHECK_FALSE(check(R"({"a":[1,2,)").ok);
  CHECK_FALSE(check(R"({"a":1,})").ok);
}

TEST_CASE("nesting beyond the limit is refused", "[json]") {
  std::string deep = "{\"a\":";
  for (int i = 0; i < 10; ++i) deep += "[";
  for (int i = 0; i < 10; ++i) deep += "]";
  deep += "}";
  CHECK(check(deep, 20).ok);
  CHECK_THAT(check(deep, 5).error, Catch::Contains("nested deeper"));
}
