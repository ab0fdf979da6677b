// What a request to an LLM API will be charged in tokens, and what its answer says it used,
// read from the bodies without a network (tests/unit/test_request_tokens.cpp).
//   - The charge on arrival, as OpenAI documents it: the request's most output tokens
//     (`max_tokens`, `max_completion_tokens`, `max_output_tokens`, Gemini's
//     `generationConfig.maxOutputTokens`) plus its prompt's tokens, estimated from the body's
//     bytes: 4 bytes a token at first, then as the answers' usage shows (the body's JSON, model
//     name and system prompt included, so the ratio is the body's, not the language's).
//   - Usage: OpenAI's `usage` (total_tokens, prompt_tokens, completion_tokens), Anthropic's
//     (input_tokens + cache_creation_input_tokens, output_tokens), Gemini's `usageMetadata`
//     (promptTokenCount, candidatesTokenCount, totalTokenCount).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dibs::http {

// The most output tokens the request asks for; nullopt when it names none (or is no JSON object).
std::optional<std::int64_t> max_output_tokens(std::string_view body);

struct token_usage {
  std::int64_t input = -1;   // -1: not said
  std::int64_t output = -1;
  // Anthropic's cache: written (counted in `input` too, as its limit counts it) and read (not in `input`).
  std::int64_t cache_write = 0;
  std::int64_t cache_write_1h = 0;  // of cache_write, written for an hour (billed at twice the 5-minute's price)
  std::int64_t cache_read = 0;
  std::int64_t total() const;  // input + output, or -1 when either is missing
  bool known() const { return total() >= 0; }
};
// What the answer says the request used; unknown (-1) members when it says nothing.
token_usage answer_usage(std::string_view body);

// The model an answer names (its top-level "model", or Gemini's "modelVersion"); "" without one.
std::string answer_model(std::string_view body);

// The estimate of a request's charge, learned from the answers. Thread-safe.
class token_estimator {
 public:
  // The charge of a request of `body_bytes` asking for at most `max_output` tokens (without one,
  // the output the answers have used, 256 before any).
  std::int64_t estimate(std::size_t body_bytes, std::optional<std::int64_t> max_output) const;
  // A request of `body_bytes` used `u`.
  void learn(std::size_t body_bytes, const token_usage& u);
  double bytes_per_token() const { return bytes_per_token_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> bytes_per_token_{4.0};
  std::atomic<double> output_{256.0};
  std::atomic<bool> learned_{false};
};

}  // namespace dibs::http
