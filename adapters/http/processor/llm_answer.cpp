#include "llm_answer.hpp"

#include "json_pointer_eval.hpp"

#include <array>
#include <vector>

namespace dibs::http {

namespace {
std::optional<std::string_view> string_at(simdjson::dom::element doc, const char* pointer) {
  std::string_view s;
  if (doc.at_pointer(pointer).get_string().get(s)) return std::nullopt;
  return s;
}

std::string cut_short(std::string_view s, std::size_t n = 160) {
  return s.size() <= n ? std::string(s) : std::string(s.substr(0, n)) + "...";
}
}  // namespace

bool may_be_llm_answer(std::string_view body) {
  for (const char* word : {"finish_reason", "stop_reason", "finishReason", "refusal", "\"incomplete\"", "blockReason"})
    if (body.find(word) != std::string_view::npos) return true;
  return false;
}

std::optional<std::string> llm_answer_failure(simdjson::dom::element doc) {
  const std::string cut = "the answer was cut at max_tokens (";
  // OpenAI's chat completions (and the many servers that speak it: vLLM, Ollama, Azure).
  if (auto r = string_at(doc, "/choices/0/finish_reason")) {
    if (*r == "length") return cut + "finish_reason: length)";
    if (*r == "content_filter") return std::string("the answer was withheld by the provider's content filter (finish_reason: content_filter)");
  }
  if (auto refusal = string_at(doc, "/choices/0/message/refusal"); refusal && !refusal->empty())
    return "the model refused: " + cut_short(*refusal);
  // Anthropic's messages.
  if (auto r = string_at(doc, "/stop_reason")) {
    if (*r == "max_tokens") return cut + "stop_reason: max_tokens)";
    if (*r == "refusal") return std::string("the model refused (stop_reason: refusal)");
  }
  // Gemini's generateContent.
  if (auto r = string_at(doc, "/candidates/0/finishReason")) {
    if (*r == "MAX_TOKENS") return cut + "finishReason: MAX_TOKENS)";
    static constexpr std::array<std::string_view, 5> withheld = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"};
    for (const auto w : withheld)
      if (*r == w) return "the answer was withheld by the provider (finishReason: " + std::string(w) + ")";
  }
  if (auto r = string_at(doc, "/promptFeedback/blockReason")) return "the prompt was blocked by the provider (blockReason: " + std::string(*r) + ")";
  // OpenAI's Responses API (its object says so: another API's "status": "incomplete", Stripe's
  // subscription, is that API's data).
  if (auto s = string_at(doc, "/status"); s && *s == "incomplete" && string_at(doc, "/object") == std::optional<std::string_view>("response")) {
    const auto why = string_at(doc, "/incomplete_details/reason");
    if (why && *why == "max_output_tokens") return cut + "status: incomplete, max_output_tokens)";
    return "the answer is incomplete (status: incomplete" + (why ? ", " + std::string(*why) : std::string()) + ")";
  }
  return std::nullopt;
}

namespace {
// The value tokens [i, end) name from `at` (a member by name, an element by index), going on into
// a string that holds JSON where tokens remain.
std::optional<std::string> walk_through_strings(const std::vector<std::string>& tokens, std::size_t i, simdjson::dom::element at) {
  for (; i < tokens.size(); ++i) {
    simdjson::dom::object obj;
    simdjson::dom::array arr;
    std::string_view text;
    simdjson::dom::element next;
    if (!at.get_object().get(obj)) {
      if (obj.at_key(tokens[i]).get(next)) return std::nullopt;  // at_key: exact bytes, as RFC 6901 says
    } else if (!at.get_array().get(arr)) {
      const auto index = array_index(tokens[i]);
      if (!index || arr.at(*index).get(next)) return std::nullopt;
    } else if (!at.get_string().get(text)) {
      thread_local simdjson::dom::parser inner;  // its own: `at` stays valid in the caller's
      const simdjson::padded_string padded(text);  // copied before `inner` is used again below
      simdjson::dom::element inner_doc;
      if (inner.parse(padded).get(inner_doc)) return std::nullopt;
      return walk_through_strings(tokens, i, inner_doc);
    } else {
      return std::nullopt;
    }
    at = next;
  }
  return json_text(at);
}
}  // namespace

std::optional<std::string> value_through_strings(const json_pointer& p, simdjson::dom::element doc) {
  return walk_through_strings(p.tokens(), 0, doc);
}

std::optional<std::string> not_json_at(const json_pointer& p, simdjson::dom::element doc) {
  const auto at = evaluate(p, doc);
  if (!at) return "the answer has no " + p.text() + " (expected JSON in it)";
  std::string_view text;
  if (at->get_string().get(text)) {
    // An object or array already (a provider's structured output); null or a number holds none.
    if (at->is_object() || at->is_array()) return std::nullopt;
    return "the answer's " + p.text() + " is " + json_text(*at) + ", not JSON text";
  }
  thread_local simdjson::dom::parser parser;  // its own: `doc` stays valid in the caller's
  simdjson::dom::element inner;
  const simdjson::padded_string padded(text);
  if (const auto err = parser.parse(padded).get(inner))
    return "the answer's " + p.text() + " is not JSON (" + simdjson::error_message(err) + "): '" + cut_short(text, 80) + "'";
  return std::nullopt;
}

}  // namespace dibs::http
