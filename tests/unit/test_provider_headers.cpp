// The LLM providers' limits, each in its own dialect (OpenAI's Go durations, Azure's seconds and
// -1, Anthropic's RFC 3339 resets and three token buckets, retry-after-ms, Gemini's RetryInfo),
// read into one shape; and what a run does with them (the requests quota, a stop when no tokens
// are left, a 429's wait to the millisecond).
#include "adapters/http/rate/provider_headers.hpp"
#include "adapters/http/rate/quota_headers.hpp"

#include <dibs/http/rate_limiter.hpp>

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

namespace {
std::chrono::system_clock::time_point at(std::int64_t epoch_s, int ms = 0) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(epoch_s) + std::chrono::milliseconds(ms));
}
}  // namespace

TEST_CASE("Go durations as OpenAI writes its resets, and Azure's bare seconds", "[provider-headers]") {
  CHECK(go_duration("1s") == 1000ms);
  CHECK(go_duration("6m0s") == 360000ms);
  CHECK(go_duration("12ms") == 12ms);
  CHECK(go_duration("2m59.56s") == 179560ms);
  CHECK(go_duration("1h2m3s") == 3723000ms);
  CHECK(go_duration("250us") == 0ms);
  CHECK(go_duration("1500us") == 2ms);  // rounded to the millisecond
  CHECK(go_duration("0s") == 0ms);
  CHECK(go_duration("1") == 1000ms);  // Azure
  CHECK(go_duration(" 1.5 ") == 1500ms);
  for (const char* bad : {"", "s", "1x", "-1s", "1s2", "abc", "1..5s"}) CHECK_FALSE(go_duration(bad));
}

TEST_CASE("RFC 3339 times as Anthropic writes its resets: fractions and offsets", "[provider-headers]") {
  CHECK(rfc3339_time("2026-11-29T10:00:30Z") == at(1795946430));
  CHECK(rfc3339_time("2026-11-29T10:00:30.250Z") == at(1795946430, 250));
  CHECK(rfc3339_time("2026-11-29T12:00:30+02:00") == at(1795946430));
  CHECK(rfc3339_time("2026-11-29T05:30:30-04:30") == at(1795946430));
  CHECK(rfc3339_time("2026-11-29t10:00:30z") == at(1795946430));
  for (const char* bad : {"", "2026-11-29", "2026-11-29T10:00:30", "2026-13-29T10:00:30Z", "2026-11-29T10:00:30+0200",
                          "2026-11-29T10:00:30Zjunk", "yesterday"})
    CHECK_FALSE(rfc3339_time(bad));
}

TEST_CASE("OpenAI's requests and tokens buckets", "[provider-headers]") {
  const header_list h{{"x-ratelimit-limit-requests", "5000"},   {"x-ratelimit-remaining-requests", "4999"},
                      {"x-ratelimit-reset-requests", "12ms"},   {"x-ratelimit-limit-tokens", "160000"},
                      {"X-RateLimit-Remaining-Tokens", "159100"}, {"x-ratelimit-reset-tokens", "337ms"}};
  const auto l = read_provider_limits(h, at(0));
  REQUIRE(l.requests);
  CHECK(l.requests->limit == 5000);
  CHECK(l.requests->remaining == 4999);
  CHECK(l.requests->reset_in == 12ms);
  REQUIRE(l.tokens);
  CHECK(l.tokens->remaining == 159100);
  CHECK(l.tokens->reset_in == 337ms);
  // The requests bucket paces the run as any quota does.
  const auto q = read_quota(h, at(0));
  REQUIRE(q);
  CHECK(q->remaining == 4999);
  CHECK(q->limit == 5000);
  CHECK(q->reset_in == 12ms);
  CHECK(q->exact);
}

TEST_CASE("Azure's -1 and 0 say nothing is known", "[provider-headers]") {
  const header_list unknown{{"x-ratelimit-limit-tokens", "-1"}, {"x-ratelimit-remaining-tokens", "-1"}, {"x-ratelimit-reset-tokens", "0"}};
  CHECK_FALSE(read_provider_limits(unknown, at(0)).any());
  CHECK_FALSE(read_quota(unknown, at(0)));
  const header_list known{{"x-ratelimit-remaining-requests", "0"}, {"x-ratelimit-reset-requests", "7"}};
  const auto l = read_provider_limits(known, at(0));
  REQUIRE(l.requests);
  CHECK(l.requests->remaining == 0);
  CHECK(l.requests->reset_in == 7000ms);
}

TEST_CASE("Anthropic's buckets: resets as times, the tightest of three token buckets", "[provider-headers]") {
  const auto now = at(1795946400);
  const header_list h{{"anthropic-ratelimit-requests-limit", "50"},
                      {"anthropic-ratelimit-requests-remaining", "49"},
                      {"anthropic-ratelimit-requests-reset", "2026-11-29T10:00:01Z"},
                      {"anthropic-ratelimit-tokens-limit", "80000"},
                      {"anthropic-ratelimit-tokens-remaining", "60000"},
                      {"anthropic-ratelimit-tokens-reset", "2026-11-29T10:00:15Z"},
                      {"anthropic-ratelimit-input-tokens-limit", "40000"},
                      {"anthropic-ratelimit-input-tokens-remaining", "4000"},
                      {"anthropic-ratelimit-input-tokens-reset", "2026-11-29T10:00:06.5Z"},
                      {"anthropic-ratelimit-output-tokens-limit", "16000"},
                      {"anthropic-ratelimit-output-tokens-remaining", "15000"},
                      {"anthropic-ratelimit-output-tokens-reset", "2026-11-29T10:00:02Z"}};
  const auto l = read_provider_limits(h, now);
  REQUIRE(l.requests);
  CHECK(l.requests->remaining == 49);
  CHECK(l.requests->reset_in == 1000ms);
  REQUIRE(l.tokens);
  CHECK(l.tokens->limit == 40000);  // the input tokens: a tenth left, the tightest
  CHECK(l.tokens->remaining == 4000);
  CHECK(l.tokens->reset_in == 6500ms);
  // And each of the two apart.
  REQUIRE(l.input_tokens);
  REQUIRE(l.output_tokens);
  CHECK(l.input_tokens->remaining == 4000);
  CHECK(l.output_tokens->limit == 16000);
  CHECK(l.output_tokens->remaining == 15000);
  CHECK(l.output_tokens->reset_in == 2000ms);
}

TEST_CASE("Anthropic's input and output buckets read in whole tokens at the requests' mix", "[provider-headers]") {
  provider_bucket in{400000, 300000, 1000ms}, out{80000, 80000, 0ms};
  // Requests of 2,000 input tokens and 500 output (0.8 input): the input bucket has room for 150
  // of them (375,000 whole tokens), the output one for 160 (400,000): the input binds.
  auto w = whole_tokens_at_mix(in, out, 0.8);
  REQUIRE(w);
  CHECK(w->remaining == 375000);
  CHECK(w->limit == 400000);  // a minute's: 200 requests of either (500,000 input-bound, 400,000 output-bound)
  CHECK(w->reset_in == 1000ms);
  // Output-heavy requests: the output bucket binds (80,000 / 0.5).
  w = whole_tokens_at_mix(in, out, 0.5);
  REQUIRE(w);
  CHECK(w->remaining == 160000);
  CHECK(w->limit == 160000);
  // Held as the tightest bucket, the same requests would have 80,000 whole tokens a minute: 32 of them.
  // No mix known, or one part never charged: no reading at a mix.
  CHECK_FALSE(whole_tokens_at_mix(in, out, 0));
  CHECK_FALSE(whole_tokens_at_mix(in, out, 1));
  // A bucket stated below zero counts as empty.
  w = whole_tokens_at_mix({400000, -5, 0ms}, out, 0.8);
  REQUIRE(w);
  CHECK(w->remaining == 0);
  // One bucket stated under both names (the same limit and the same remaining: an API metering
  // input and output together, as OpenAI does, in Anthropic's headers): a request's whole tokens
  // all come out of it. Read at the mix, 3,000 left would have read as 3,000 / 0.65 = 4,615.
  w = whole_tokens_at_mix({6000, 3000, 30000ms}, {6000, 3000, 30000ms}, 0.65);
  REQUIRE(w);
  CHECK(w->remaining == 3000);
  CHECK(w->limit == 6000);
  CHECK(w->reset_in == 30000ms);
  // Neither states a limit: the same remaining reads as one bucket too.
  w = whole_tokens_at_mix({std::nullopt, 3000, 0ms}, {std::nullopt, 3000, 0ms}, 0.65);
  REQUIRE(w);
  CHECK(w->remaining == 3000);
  // Equal limits, different remainders: two buckets, read at the mix.
  w = whole_tokens_at_mix({6000, 3000, 0ms}, {6000, 4000, 0ms}, 0.5);
  REQUIRE(w);
  CHECK(w->remaining == 6000);
}

TEST_CASE("retry-after-ms, Gemini's RetryInfo, and 529 as the providers say to wait", "[provider-headers]") {
  CHECK(retry_after_ms({{"retry-after-ms", "1500"}}) == 1500ms);
  CHECK_FALSE(retry_after_ms({{"retry-after-ms", "soon"}}));
  CHECK_FALSE(retry_after_ms({{"retry-after", "2"}}));
  const auto now = at(1795946400);
  // A 429 with both: the milliseconds win over Retry-After's whole seconds.
  CHECK(stop_until_from_headers(429, {{"retry-after-ms", "1500"}, {"Retry-After", "2"}}, now) == now + 1500ms);
  CHECK(stop_until_from_headers(529, {{"retry-after", "3"}}, now) == now + 3s);
  // No tokens left: stop until the tokens' reset, whatever the status.
  CHECK(stop_until_from_headers(200, {{"x-ratelimit-remaining-tokens", "0"}, {"x-ratelimit-reset-tokens", "2.5s"}}, now) ==
        now + 2500ms);
  CHECK_FALSE(stop_until_from_headers(200, {{"x-ratelimit-remaining-tokens", "10"}, {"x-ratelimit-reset-tokens", "2.5s"}}, now));

  const std::string gemini = R"({"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED",
    "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "x"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"}]}})";
  CHECK(gemini_retry_delay(gemini) == 26000ms);
  CHECK(gemini_retry_delay(R"({"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}})") ==
        1500ms);
  CHECK_FALSE(gemini_retry_delay(R"({"error": {"message": "quota"}})"));
  CHECK_FALSE(gemini_retry_delay("not json"));
}

TEST_CASE("OpenAI's 429 body says when in its message, and says when a request can never fit", "[provider-headers]") {
  // A server behind OpenAI's API shape that sends no rate-limit header (a proxy strips them, a
  // self-hosted one never sent them) still says when in its message.
  const std::string tpm = R"({"error": {"message": "Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500. Please try again in 14.951s. Visit https://platform.openai.com/account/rate-limits to learn more.", "type": "tokens", "code": "rate_limit_exceeded"}})";
  CHECK(body_retry_delay(tpm) == 14951ms);
  CHECK(body_retry_delay(R"({"error": {"message": "Please try again in 20ms.", "code": "rate_limit_exceeded"}})") == 20ms);
  CHECK(body_retry_delay(R"({"error": {"message": "... Please try again in 6m0s. Visit ..."}})") == 360000ms);
  CHECK_FALSE(body_retry_delay(R"({"error": {"message": "Please try again later."}})"));
  CHECK(body_retry_delay(R"({"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]}})") == 2000ms);
  CHECK_FALSE(never_fits_the_limit(tpm));
  CHECK(never_fits_the_limit(R"({"error": {"message": "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.", "type": "tokens", "code": "rate_limit_exceeded"}})"));
  CHECK_FALSE(never_fits_the_limit("not json"));
}
