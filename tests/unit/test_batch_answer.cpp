// ip-api's batch as a profile of the batch template, both sides without a network: what dibs
// sends (`[{ip}]`: the keys as a JSON array) and how it reads the answer (by place, each answer
// checked against the key it names in "query"), and the stub's ip-api rules for `POST /batch`.
#include <dibs/http/batch_body.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include "adapters/http/processor/batch_items.hpp"
#include "profiles/ipapi/ipapi_profile.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
http::batch_items split(const std::string& body, const std::vector<std::string>& keys) {
  simdjson::dom::parser p;
  return http::split_batch_items(p, body, *http::batch_item_pointer::parse(http::ipapi::batch_item), keys.size(),
                                 {http::ipapi::batch_echo, &keys});
}
}  // namespace

TEST_CASE("ip-api's batch request is a JSON array of the keys, escaped", "[batch]") {
  const auto body = http::batch_body::parse(http::ipapi::batch_body("ip"), "--batch-body");
  std::vector<std::string> elements;
  for (const char* key : {"1.2.3.4", "a\"b\\c\n"}) {
    job j;
    j.fields.push_back({"ip", job_field::state::string, key, {}, {}});
    elements.push_back(body.element(j).text);
  }
  CHECK(body.join(elements) == R"(["1.2.3.4","a\"b\\c\n"])");
}

TEST_CASE("ip-api's batch answer is split by place and checked against each key it names", "[batch]") {
  const std::vector<std::string> keys{"8.8.8.8", "10.0.0.1", "1.1.1.1", "9.9.9.9", "4.4.4.4"};
  const std::string body = R"([{"status":"success","query":"8.8.8.8","city":"X"},
    {"status":"fail","message":"private range","query":"10.0.0.1"},
    {"status":"success","query":"2.2.2.2"},
    [1,2],
    {"status":"success"}])";
  auto s = split(body, keys);
  REQUIRE(s.error.empty());
  REQUIRE(s.items.size() == 5);
  CHECK(s.items[0].ok);
  CHECK(s.items[0].text == R"({"status":"success","query":"8.8.8.8","city":"X"})");  // one line
  CHECK(s.items[1].ok);  // ip-api's "fail" is the status check's to judge (item_outcome)
  CHECK_FALSE(s.items[2].ok);
  CHECK(s.items[2].text == "the batch answer in the place of '1.1.1.1' is for '2.2.2.2'");
  CHECK_FALSE(s.items[3].ok);
  CHECK(s.items[3].text == "the batch answer's element for this item is not a JSON object");
  CHECK(s.items[4].ok);  // names no key: taken by its place
  CHECK(s.out_of_step);  // the third answers another key: its connection may be one behind
  const std::string in_step = R"([{"query":"8.8.8.8"},{"query":"10.0.0.1"},{"query":"1.1.1.1"},[1,2],{}])";
  CHECK_FALSE(split(in_step, keys).out_of_step);  // one bad, but its own
  // A key that is a number in the answer is compared as its JSON text.
  CHECK(split(R"([{"query":42}])", {"42"}).items[0].ok);
  CHECK_FALSE(split(R"([{"query":43}])", {"42"}).items[0].ok);
}

TEST_CASE("a key that is not a string is named by its JSON: an id 7 is echoed as 7 or as \"7\"", "[batch]") {
  const job_field number{"id", job_field::state::not_string, "", "int64", "7"};
  const job_field text{"id", job_field::state::string, "7", {}, {}};
  CHECK(http::echo_key(&number) == "7");
  CHECK(http::echo_key(&text) == "7");
  CHECK(http::echo_key(nullptr).empty());
  simdjson::dom::parser p;
  const auto where = *http::batch_item_pointer::parse("/data/{i}");
  const std::vector<std::string> keys{http::echo_key(&number), "8"};
  const auto s = http::split_batch_items(p, R"({"data":[{"id":7,"v":1},{"id":"8","v":2}]})", where, 2, {"id", &keys});
  REQUIRE(s.error.empty());
  CHECK(s.items[0].ok);
  CHECK(s.items[1].ok);
  CHECK_FALSE(s.out_of_step);
}

TEST_CASE("an answer is kept as the API wrote it: its numbers' digits, its escapes", "[batch]") {
  simdjson::dom::parser p;
  const auto where = *http::batch_item_pointer::parse("/data/{i}/embedding");
  const auto s = http::split_batch_items(p, "{\"data\": [ {\"embedding\": [0.10, 1.0e2 ] },\n {\"embe\\u0064ding\": [2.50]} ]}", where, 2);
  REQUIRE(s.error.empty());
  CHECK(s.items[0].text == R"({"value":[0.10,1.0e2]})");
  // A key spelled with an escape: found (the DOM reads it), its value in the DOM's own writing.
  REQUIRE(s.items[1].ok);
  CHECK(s.items[1].text == R"({"value":[2.5]})");
}

TEST_CASE("ip-api's batch answer that is unusable as a whole says why", "[batch]") {
  const std::vector<std::string> keys{"8.8.8.8", "1.1.1.1"};
  CHECK(split(R"([{"query":"8.8.8.8"}])", keys).error == "the batch answer has 1 elements for 2 items: none is believed");
  CHECK(split(R"([{"query":"8.8.8.8"}])", keys).out_of_step);
  CHECK_FALSE(split(R"({"query":"8.8.8.8"})", keys).out_of_step);
  CHECK(split(R"({"query":"8.8.8.8"})", keys).error == "the batch answer has no array at '/'");
  CHECK_THAT(split(R"([{"query":"8.8.8.8"},)", keys).error, Catch::StartsWith("the batch answer is not valid JSON: "));
  // Found by fuzzing the splitter this replaced: one malformed element must not make the rest
  // look like plausible items.
  auto bad = split(R"([{"query":"8.8.8.8"},{"status":"fail","message":"x":"1.1.1.1"}])", keys);
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
