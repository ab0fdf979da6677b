// The batch wire format, both sides: what dibs sends and how it reads the answer, and the stub's
// ip-api rules for `POST /batch`.
#include "adapters/http/processor/batch_answer.hpp"
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using item_kind = http::batch_item_verdict::kind;

TEST_CASE("a batch request is a JSON array of the keys, escaped", "[batch]") {
  CHECK(http::batch_request_body({}) == "[]");
  CHECK(http::batch_request_body({"1.2.3.4", "a\"b\\c\n"}) == R"(["1.2.3.4","a\"b\\c\n"])");
}

TEST_CASE("a batch answer is split by position and checked against each key", "[batch]") {
  simdjson::ondemand::parser p, q;
  const std::vector<std::string> keys{"8.8.8.8", "10.0.0.1", "1.1.1.1", "9.9.9.9"};
  const std::string body = R"([{"status":"success","query":"8.8.8.8","city":"X"},
    {"status":"fail","message":"private range","query":"10.0.0.1"},
    {"status":"success","query":"2.2.2.2"},
    [1,2]])";
  auto s = http::split_batch_answer(p, q, body, keys, true);
  REQUIRE(s.error.empty());
  REQUIRE(s.items.size() == 4);
  CHECK(s.items[0].k == item_kind::done);
  CHECK(s.items[0].text == R"({"status":"success","query":"8.8.8.8","city":"X"})");  // as the API wrote it
  CHECK(s.items[1].k == item_kind::no_data);
  CHECK(s.items[1].text == "the API has no data: private range");
  CHECK_THAT(s.items[1].answer, Catch::StartsWith(R"({"status":"fail")"));  // written as the answer by default
  CHECK(s.items[2].k == item_kind::bad);
  CHECK(s.items[2].text == "the batch answer in the place of '1.1.1.1' is for '2.2.2.2'");
  CHECK(s.items[3].k == item_kind::bad);
  CHECK(s.items[3].text == "the batch answer for '9.9.9.9' is not a JSON object");
  CHECK(s.out_of_step);  // the third answers another key: its connection may be one behind
  const std::string in_step = R"([{"query":"8.8.8.8"},{"query":"10.0.0.1"},{"query":"1.1.1.1"},[1,2]])";
  CHECK_FALSE(http::split_batch_answer(p, q, in_step, keys, true).out_of_step);  // bad, but its own

  auto unchecked = http::split_batch_answer(p, q, body, keys, false);
  CHECK(unchecked.items[1].k == item_kind::done);  // --no-status-check stores ip-api's "fail" answers
}

TEST_CASE("a batch answer that is unusable as a whole says why", "[batch]") {
  simdjson::ondemand::parser p, q;
  const std::vector<std::string> keys{"8.8.8.8", "1.1.1.1"};
  CHECK(http::split_batch_answer(p, q, R"([{"query":"8.8.8.8"}])", keys, true).error ==
        "the batch answer has 1 elements for 2 keys");
  CHECK(http::split_batch_answer(p, q, R"([{"query":"8.8.8.8"}])", keys, true).out_of_step);
  CHECK_FALSE(http::split_batch_answer(p, q, R"({"query":"8.8.8.8"})", keys, true).out_of_step);
  CHECK(http::split_batch_answer(p, q, R"({"query":"8.8.8.8"})", keys, true).error == "the batch answer is not a JSON array");
  CHECK_THAT(http::split_batch_answer(p, q, R"([{"query":"8.8.8.8"},)", keys, true).error,
             Catch::StartsWith("the batch answer is not valid JSON: "));
  // Found by fuzzing: one malformed element made the rest look like plausible items.
  auto bad = http::split_batch_answer(p, q, R"([{"query":"8.8.8.8"},{"status":"fail","message":"x":"1.1.1.1"}])", keys, true);
  CHECK_THAT(bad.error, Catch::StartsWith("the batch answer is not valid JSON: "));
  CHECK(bad.items.empty());
}

TEST_CASE("the stub's /batch keeps ip-api's rules: order, at most 100 keys, an array", "[batch][stub]") {
  auto ok = stub::batch_answer_for(R"(["8.8.8.8",{"query":"10.1.2.3","fields":"city"}])");
  CHECK(ok.status == 200);
  CHECK(ok.body == "[" + stub::answer_for("8.8.8.8") + "," + stub::answer_for("10.1.2.3") + "]");

  std::string many = "[";
  for (int i = 0; i < 101; ++i) many += std::string(i ? "," : "") + "\"8.8.8.8\"";
  CHECK(stub::batch_answer_for(many + "]").status == 422);
  CHECK(stub::batch_answer_for("{\"query\":\"8.8.8.8\"}").status == 400);
  CHECK(stub::batch_answer_for("[1]").status == 400);
}
