#include "adapters/http/processor/json_check.hpp"

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

TEST_CASE("unit: an answer with a key twice in one object is refused, at any depth", "[json][secrets]") {
  // Parsers disagree on which copy counts (simdjson and libbson take the first, MySQL the last):
  // "success" here could be stored as "fail" there.
  auto r = check(R"({"status":"success","status":"fail"})");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Contains("\"status\" twice"));
  CHECK_FALSE(check(R"({"a":{"b":1,"c":2,"b":3}})").ok);
  CHECK_FALSE(check(R"({"a":[{"x":1},{"y":1,"y":2}]})").ok);
  CHECK_FALSE(check(R"({"country":"DE","n":1,"country":"FR"})").ok);
  // An escaped spelling of the same key is the same key.
  CHECK_FALSE(check(R"({"status":"success","st\u0061tus":"fail"})").ok);
  // The same key in two different objects is no duplicate; nor are many distinct keys.
  CHECK(check(R"({"a":{"k":1},"b":{"k":2},"c":[{"k":3},{"k":4}]})").ok);
  std::string many = "{";
  for (int i = 0; i < 500; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  CHECK(check(many + "}").ok);
  // A long key is named cut short.
  const auto long_key = check("{\"" + std::string(200, 'k') + "\":1,\"" + std::string(200, 'k') + "\":2}");
  CHECK_FALSE(long_key.ok);
  CHECK(long_key.error.size() < 150);
}
