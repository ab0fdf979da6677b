#include "request_tokens.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace dibs::http {

namespace {
// A whole number member of `obj`, when it holds one >= 0.
std::optional<std::int64_t> count_member(simdjson::dom::object obj, std::string_view name) {
  simdjson::dom::element e;
  if (obj[name].get(e)) return std::nullopt;
  std::int64_t i = 0;
  if (!e.get_int64().get(i) && i >= 0) return i;
  std::uint64_t u = 0;
  if (!e.get_uint64().get(u)) return static_cast<std::int64_t>(std::min<std::uint64_t>(u, INT64_MAX));
  double d = 0;
  if (!e.get_double().get(d) && d >= 0 && d < 9e18) return static_cast<std::int64_t>(d);
  return std::nullopt;
}

bool parse_object(simdjson::dom::parser& p, std::string_view body, simdjson::dom::object& obj) {
  if (body.empty() || body.front() != '{') return false;
  const simdjson::padded_string padded(body);
  simdjson::dom::element doc;
  return !p.parse(padded).get(doc) && !doc.get_object().get(obj);
}
}  // namespace

std::optional<std::int64_t> max_output_tokens(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (!parse_object(parser, body, obj)) return std::nullopt;
  for (const auto* name : {"max_completion_tokens", "max_tokens", "max_output_tokens"})
    if (auto n = count_member(obj, name)) return n;
  simdjson::dom::object gen;
  if (!obj["generationConfig"].get_object().get(gen)) return count_member(gen, "maxOutputTokens");
  return std::nullopt;
}

std::int64_t token_usage::total() const { return input >= 0 && output >= 0 ? input + output : -1; }

token_usage answer_usage(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object obj;
  token_usage u;
  if (!parse_object(parser, body, obj)) return u;
  simdjson::dom::object usage;
  if (!obj["usage"].get_object().get(usage)) {
    if (auto in = count_member(usage, "prompt_tokens")) {  // OpenAI's chat, embeddings
      u.input = *in;
      u.output = count_member(usage, "completion_tokens").value_or(0);
      if (auto total = count_member(usage, "total_tokens"); total && *total >= u.input) u.output = *total - u.input;
    } else if (auto in2 = count_member(usage, "input_tokens")) {  // Anthropic's; OpenAI's Responses
      // Anthropic counts a cache write against its input limit; a cache read it does not.
      u.cache_write = count_member(usage, "cache_creation_input_tokens").value_or(0);
      u.cache_read = count_member(usage, "cache_read_input_tokens").value_or(0);
      simdjson::dom::object written;
      if (!usage["cache_creation"].get_object().get(written))
        u.cache_write_1h = count_member(written, "ephemeral_1h_input_tokens").value_or(0);
      u.input = *in2 + u.cache_write;
      u.output = count_member(usage, "output_tokens").value_or(0);
    }
    return u;
  }
  simdjson::dom::object meta;
  if (!obj["usageMetadata"].get_object().get(meta)) {  // Gemini's
    if (auto in = count_member(meta, "promptTokenCount")) {
      u.input = *in;
      u.output = count_member(meta, "candidatesTokenCount").value_or(0);
      if (auto total = count_member(meta, "totalTokenCount"); total && *total >= u.input) u.output = *total - u.input;
    }
  }
  return u;
}

std::string answer_model(std::string_view body) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (!parse_object(parser, body, obj)) return {};
  std::string_view model;
  if (!obj["model"].get_string().get(model) || !obj["modelVersion"].get_string().get(model)) return std::string(model);
  return {};
}

std::int64_t token_estimator::estimate(std::size_t body_bytes, std::optional<std::int64_t> max_output) const {
  const double per = std::max(bytes_per_token_.load(std::memory_order_relaxed), 0.5);
  const auto prompt = static_cast<std::int64_t>(std::ceil(static_cast<double>(body_bytes) / per));
  const auto out = max_output ? *max_output : static_cast<std::int64_t>(std::ceil(output_.load(std::memory_order_relaxed)));
  return prompt + out;
}

void token_estimator::learn(std::size_t body_bytes, const token_usage& u) {
  if (u.input <= 0 || body_bytes == 0) return;
  const double ratio = static_cast<double>(body_bytes) / static_cast<double>(u.input);
  // The estimate errs high: a request charged less than the server charges it may be refused,
  // one charged more holds its surplus only until its answer settles it. So the ratio follows
  // the densest requests (the most tokens a byte) at once, and the sparser ones slowly.
  const bool first = !learned_.exchange(true, std::memory_order_relaxed);
  const double was = bytes_per_token_.load(std::memory_order_relaxed);
  // One answer moves it down by half at most (an image's few bytes of many tokens is one request,
  // not the run's).
  bytes_per_token_.store(first ? ratio : ratio < was ? std::max(ratio, was / 2) : was + (ratio - was) / 100,
                         std::memory_order_relaxed);
  if (u.output >= 0) {
    const double o = output_.load(std::memory_order_relaxed);
    output_.store(first ? static_cast<double>(u.output) : o + (static_cast<double>(u.output) - o) / 10, std::memory_order_relaxed);
  }
}

}  // namespace dibs::http
