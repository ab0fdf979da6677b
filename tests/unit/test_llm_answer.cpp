// What an LLM's 200 answer means when it is no answer to use (cut at max_tokens, refused,
// withheld), in OpenAI's, Anthropic's, Gemini's and the Responses API's words; --expect-json; and
// --map reaching into the JSON a chat content holds.
#include "adapters/http/processor/llm_answer.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

namespace {
std::optional<std::string> failure_of(const std::string& body) {
  static simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE_FALSE(p.parse(body).get(doc));
  return llm_answer_failure(doc);
}
json_pointer ptr(const std::string& text) { return *json_pointer::parse(text); }
}  // namespace

TEST_CASE("an LLM's answer cut at max_tokens, refused or withheld is no answer to use, in each provider's words", "[llm-answer]") {
  const std::string openai_cut = R"({"choices":[{"message":{"content":"{\"label\": \"neg"},"finish_reason":"length"}]})";
  CHECK(may_be_llm_answer(openai_cut));
  CHECK_THAT(*failure_of(openai_cut), Catch::Contains("cut at max_tokens (finish_reason: length)"));
  CHECK_THAT(*failure_of(R"({"stop_reason":"max_tokens","content":[{"type":"text","text":"{\"a"}]})"),
             Catch::Contains("stop_reason: max_tokens"));
  CHECK_THAT(*failure_of(R"({"candidates":[{"finishReason":"MAX_TOKENS"}]})"), Catch::Contains("MAX_TOKENS"));
  CHECK_THAT(*failure_of(R"({"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}})"),
             Catch::Contains("max_output_tokens"));
  CHECK_THAT(*failure_of(R"({"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]})"),
             Catch::Contains("the model refused: I can't help with that."));
  CHECK_THAT(*failure_of(R"({"stop_reason":"refusal","content":[]})"), Catch::Contains("refused"));
  CHECK_THAT(*failure_of(R"({"choices":[{"finish_reason":"content_filter"}]})"), Catch::Contains("content filter"));
  CHECK_THAT(*failure_of(R"({"candidates":[{"finishReason":"SAFETY"}]})"), Catch::Contains("SAFETY"));
  CHECK_THAT(*failure_of(R"({"promptFeedback":{"blockReason":"OTHER"}})"), Catch::Contains("blocked"));
  // Whole answers.
  CHECK_FALSE(failure_of(R"({"choices":[{"message":{"content":"ok","refusal":null},"finish_reason":"stop"}]})"));
  CHECK_FALSE(failure_of(R"({"stop_reason":"end_turn","content":[{"type":"text","text":"ok"}]})"));
  CHECK_FALSE(failure_of(R"({"candidates":[{"finishReason":"STOP"}]})"));
  CHECK_FALSE(failure_of(R"({"status":"completed"})"));
  // Another API's "incomplete" is its data (Stripe's subscription), not a cut answer.
  CHECK_FALSE(failure_of(R"({"object":"subscription","status":"incomplete"})"));
  CHECK(failure_of(R"({"object":"response","status":"incomplete","incomplete_details":{"reason":"content_filter"}})"));
  // Another API's answer is never parsed for it.
  CHECK_FALSE(may_be_llm_answer(R"({"status":"success","country":"France"})"));
}

TEST_CASE("expect_json: the member must be a string that holds JSON", "[llm-answer]") {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  const auto content = ptr("/choices/0/message/content");
  REQUIRE_FALSE(p.parse(std::string(R"({"choices":[{"message":{"content":"{\"label\": \"positive\"}"}}]})")).get(doc));
  CHECK_FALSE(not_json_at(content, doc));
  REQUIRE_FALSE(p.parse(std::string(R"({"choices":[{"message":{"content":"Sure! Here is the JSON: {\"label\""}}]})")).get(doc));
  CHECK_THAT(*not_json_at(content, doc), Catch::Contains("is not JSON") && Catch::Contains("'Sure! Here is the JSON"));
  REQUIRE_FALSE(p.parse(std::string(R"({"choices":[]})")).get(doc));
  CHECK_THAT(*not_json_at(content, doc), Catch::Contains("has no /choices/0/message/content"));
  // A null content (a tool call, a refusal said no other way) holds no JSON.
  REQUIRE_FALSE(p.parse(std::string(R"({"choices":[{"message":{"content":null}}]})")).get(doc));
  CHECK_THAT(*not_json_at(content, doc), Catch::Contains("is null, not JSON text"));
  REQUIRE_FALSE(p.parse(std::string(R"({"choices":[{"message":{"content":{"label":"x"}}}]})")).get(doc));
  CHECK_FALSE(not_json_at(content, doc));  // structured output: an object already
}

TEST_CASE("a pointer goes on into a string that holds JSON: --map reads an LLM's content's members", "[llm-answer]") {
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE_FALSE(p.parse(std::string(
      R"({"choices":[{"message":{"content":"{\"label\": \"négatif\", \"scores\": [0.9, 0.1], \"a/b\": {\"c\": true}}"}}],"usage":{"total_tokens":29}})")).get(doc));
  CHECK(value_through_strings(ptr("/choices/0/message/content/label"), doc) == "\"négatif\"");
  CHECK(value_through_strings(ptr("/choices/0/message/content/scores/1"), doc) == "0.1");
  CHECK(value_through_strings(ptr("/choices/0/message/content/a~1b/c"), doc) == "true");
  CHECK(value_through_strings(ptr("/usage/total_tokens"), doc) == "29");
  CHECK(value_through_strings(ptr("/choices/0/message/content"), doc)->front() == '"');  // the string itself
  CHECK_FALSE(value_through_strings(ptr("/choices/0/message/content/missing"), doc));
  CHECK_FALSE(value_through_strings(ptr("/usage/total_tokens/x"), doc));
  REQUIRE_FALSE(p.parse(std::string(R"({"content":"not json at all"})")).get(doc));
  CHECK_FALSE(value_through_strings(ptr("/content/label"), doc));
}
