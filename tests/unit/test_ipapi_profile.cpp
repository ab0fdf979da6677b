// ip-api's words, in their one profile: "status":"fail" is an item failure with its message,
// "query" the key an answer is for.
#include "profiles/ipapi/ipapi_profile.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

namespace {
json_check_result read(std::string body) {
  static simdjson::ondemand::parser parser;
  return check_json_object(parser, body, 64, dibs::http::ipapi::members());
}
}  // namespace

TEST_CASE("ip-api profile: a status fail answer is a failure reason, a success none", "[json][ipapi]") {
  CHECK(dibs::http::ipapi::no_data_reason(read(R"({"status":"fail","message":"private range","query":"10.0.0.1"})")) ==
        "the API has no data: private range");
  CHECK(dibs::http::ipapi::no_data_reason(read(R"({"status":"fail"})")) == "the API has no data: status fail");
  CHECK_FALSE(dibs::http::ipapi::no_data_reason(read(R"({"status":"success","country":"DE"})")));
  CHECK_FALSE(dibs::http::ipapi::no_data_reason(read(R"({"status":{"nested":"fail"}})")));  // not ip-api's string
  CHECK_FALSE(dibs::http::ipapi::no_data_reason(read(R"({"country":"DE"})")));
  CHECK(dibs::http::ipapi::answered_key(read(R"({"status":"success","query":"8.8.8.8"})")) == "8.8.8.8");
  CHECK(dibs::http::ipapi::answered_key(read(R"({"status":"success"})")).empty());
}
