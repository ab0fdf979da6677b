// What the LLM providers say of their limits, each in its own dialect, read into one shape:
//   - OpenAI: x-ratelimit-{limit,remaining,reset}-{requests,tokens}, the resets as Go durations
//     ("1s", "6m0s", "12ms", "2m59.56s");
//   - Azure OpenAI: the same names, a reset in whole seconds ("1"), and -1 (a limit or what is
//     left) or 0 (a reset) where it knows nothing;
//   - Anthropic: anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,
//     remaining,reset}, the resets as RFC 3339 times ("2026-11-29T10:00:30Z", fractions and offsets);
//     its tokens the tightest of its three token buckets, its input and output ones also apart;
//   - retry-after-ms (OpenAI, Azure): how long to wait, in milliseconds;
//   - Gemini: no headers, but a 429's body with a google.rpc.RetryInfo whose retryDelay is "26s".
// Pure; unit-tested in tests/unit/test_provider_headers.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dibs::http {

// A Go duration ("1h2m3.5s", "12ms", "250us", "0s"), or a bare number of seconds ("1", "1.5":
// Azure's); nullopt for anything else or a negative one.
std::optional<std::chrono::milliseconds> go_duration(std::string_view text);

// An RFC 3339 time ("2026-11-29T10:00:30Z", "2026-11-29T10:00:30.25+02:00"); nullopt otherwise.
std::optional<std::chrono::system_clock::time_point> rfc3339_time(std::string_view text);

// One of a provider's buckets as its headers state it.
struct provider_bucket {
  std::optional<std::int64_t> limit;      // what a window allows, when said
  std::int64_t remaining = 0;             // what is left of it
  std::chrono::milliseconds reset_in{0};  // until it is full again (0: not said)
};

struct provider_limits {
  std::optional<provider_bucket> requests;
  std::optional<provider_bucket> tokens;
  // Anthropic's input and output tokens, each a bucket of its own (`tokens` is then the tightest).
  std::optional<provider_bucket> input_tokens;
  std::optional<provider_bucket> output_tokens;
  bool any() const { return requests || tokens; }
};

using header_list = std::vector<std::pair<std::string, std::string>>;

// The buckets `headers` state (OpenAI's, Azure's or Anthropic's names); `now` reads an RFC 3339
// reset. A bucket whose remaining is not said, or said as -1, is not stated.
provider_limits read_provider_limits(const header_list& headers, std::chrono::system_clock::time_point now);

// Input and output buckets held apart (Anthropic's), read as one bucket of whole tokens (input
// plus output) for requests whose charge is `input_share` input and the rest output: as many
// whole tokens as the bucket that runs out first leaves room for, at that mix. A reading for a
// meter that holds one bucket, exact while the requests' mix holds; nullopt without a mix (0 or
// 1: one of the two is never charged, and the other bucket is the whole story). The two stating
// the same limit and remaining are read as one bucket of whole tokens (input and output together).
std::optional<provider_bucket> whole_tokens_at_mix(const provider_bucket& input, const provider_bucket& output, double input_share);

// retry-after-ms, when it holds a number of milliseconds.
std::optional<std::chrono::milliseconds> retry_after_ms(const header_list& headers);

// Gemini's 429 body: the retryDelay of its google.rpc.RetryInfo ("26s", "1.5s"); nullopt when the
// body holds none.
std::optional<std::chrono::milliseconds> gemini_retry_delay(std::string_view body);
// A 429's body's word of when: Gemini's RetryInfo, or OpenAI's message ("... Please try again in
// 14.951s. ..."), which a server that sends no rate-limit header (a proxy strips them, a
// self-hosted one never sent them) still writes; nullopt when the body says neither.
std::optional<std::chrono::milliseconds> body_retry_delay(std::string_view body);
// OpenAI's 429 "Request too large for ... on tokens per min": the request asks more tokens than
// the whole limit, and no wait makes it fit (the row fails at once).
bool never_fits_the_limit(std::string_view body);

}  // namespace dibs::http
