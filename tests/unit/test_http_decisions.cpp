// The HTTP side's decisions, without a server: how long an API's stop is honored, when a pool
// looks its host up again, how a pretty-printed answer is stored, the TLS floor.
#include "adapters/http/client/endpoint_refresh.hpp"
#include <dibs/http/exchange_policy.hpp>
#include "adapters/http/processor/json_check.hpp"
#include "adapters/http/client/tls_context.hpp"
#include "engine/src/json_text.hpp"

#include <openssl/ssl.h>

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

namespace {
response answer(int status, std::vector<std::pair<std::string, std::string>> headers) {
  response r;
  r.status = status;
  r.headers = std::move(headers);
  return r;
}
}  // namespace

TEST_CASE("a refusal paused for speaks of speed to the adaptive limit only as a 429 the headers said when of", "[rate][http]") {
  const auto bucket = answer(429, {{"Retry-After", "1"}});
  CHECK(pause_speaks_of_speed(bucket, true, false));  // a token bucket's: the calls went too fast
  CHECK_FALSE(pause_speaks_of_speed(bucket, false, false));  // cut to --max-retry-after: a quota
  CHECK_FALSE(pause_speaks_of_speed(bucket, true, true));    // the token meter follows an LLM's 429s
  CHECK_FALSE(pause_speaks_of_speed(answer(503, {{"Retry-After", "30"}}), true, false));  // downtime
  // Said only in its body (Gemini's RetryInfo): the limit heard it already, as a bare refusal.
  CHECK_FALSE(pause_speaks_of_speed(answer(429, {}), true, false));
  CHECK(pause_speaks_of_speed(answer(429, {{"retry-after-ms", "200"}}), true, false));
  // A quota's: an allowance spent until its reset, nothing of speed.
  CHECK_FALSE(pause_speaks_of_speed(answer(429, {{"X-Rl", "0"}, {"X-Ttl", "30"}}), true, false));
  CHECK_FALSE(pause_speaks_of_speed(
      answer(429, {{"Retry-After", "30"}, {"RateLimit-Limit", "100"}, {"RateLimit-Remaining", "0"}, {"RateLimit-Reset", "30"}}),
      true, false));
  CHECK(pause_speaks_of_speed(
      answer(429, {{"Retry-After", "1"}, {"RateLimit-Limit", "100"}, {"RateLimit-Remaining", "40"}, {"RateLimit-Reset", "30"}}),
      true, false));
}

TEST_CASE("a huge Retry-After or X-Ttl is capped at --max-retry-after", "[rate][http]") {
  rate_limiter l;
  const auto before = rate_limiter::clock::now();
  const auto stop = honor_stop_signals(l, "api.example", answer(503, {{"Retry-After", "999999999"}}), 1h);
  CHECK(stop == 1h);
  CHECK(l.paused_until("api.example") <= rate_limiter::clock::now() + 1h);
  CHECK(l.paused_until("api.example") >= before + 1h);
  // ip-api's X-Ttl, and a value too long for any clock: the same cap, no overflow.
  CHECK(honor_stop_signals(l, "b", answer(200, {{"X-Rl", "0"}, {"X-Ttl", "99999999999999"}}), 10min) == 10min);
  CHECK(honor_stop_signals(l, "c", answer(429, {{"Retry-After", "12345678901234567"}}), 1h) == 1h);
  // A stop within the cap is honored as it is.
  const auto ok = honor_stop_signals(l, "d", answer(429, {{"Retry-After", "7"}}), 1h);
  CHECK(ok <= 7s);
  CHECK(ok >= 6s);
  // The default cap is one hour.
  CHECK(honor_stop_signals(l, "e", answer(429, {{"Retry-After", "86400"}})) == 1h);
}

TEST_CASE("an absurd Retry-After is read without overflowing the clock", "[rate][http]") {
  const auto now = std::chrono::system_clock::from_time_t(1'700'000'000);
  using H = std::vector<std::pair<std::string, std::string>>;
  const auto huge = stop_until_from_headers(503, H{{"Retry-After", "999999999999999999"}}, now);
  REQUIRE(huge);
  CHECK(*huge > now + 24h * 365 * 30);
  const auto date = stop_until_from_headers(503, H{{"Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"}}, now);
  REQUIRE(date);
  CHECK(*date > now);
}

TEST_CASE("a pool looks its host up first, after every address failed, and periodically, an IP never", "[http]") {
  const auto t0 = std::chrono::steady_clock::time_point{} + 1000h;
  endpoint_freshness f;
  CHECK(should_resolve(f, t0, 60s));  // never looked up
  f.resolved = true;
  f.resolved_at = t0;
  CHECK_FALSE(should_resolve(f, t0 + 59s, 60s));
  CHECK(should_resolve(f, t0 + 60s, 60s));  // periodically: a DNS change is seen
  f.all_failed = true;
  CHECK(should_resolve(f, t0 + 1s, 60s));  // the host may have moved
  endpoint_freshness ip;
  ip.literal = true;
  CHECK_FALSE(should_resolve(ip, t0 + 1000h, 60s));
}

TEST_CASE("a lookup's addresses are kept in order, each once", "[http]") {
  using boost::asio::ip::make_address;
  using ep = boost::asio::ip::tcp::endpoint;
  const ep a(make_address("127.0.0.1"), 80), b(make_address("::1"), 80), c(make_address("127.0.0.1"), 81);
  CHECK(unique_endpoints({a, b, a, c, b, a}) == std::vector<ep>{a, b, c});
  CHECK(unique_endpoints({}).empty());
}

TEST_CASE("a pretty-printed answer is stored compact, strings untouched", "[json][http]") {
  std::string pretty = "{\n  \"status\": \"success\",\n  \"city\": \"Mountain View\",\n  \"n\": [ 1, 2 ],\n"
                       "  \"s\": \"a \\\" b\\n { c }\"\n}\n";
  dibs::compact_json_in_place(pretty);
  CHECK(pretty == R"({"status":"success","city":"Mountain View","n":[1,2],"s":"a \" b\n { c }"})");
  std::string compact = R"({"a":"b c"})";
  dibs::compact_json_in_place(compact);
  CHECK(compact == R"({"a":"b c"})");
}

TEST_CASE("the client's TLS context refuses anything below TLS 1.2, whatever the system allows", "[tls][http]") {
  boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
  boost::system::error_code ec;
  configure_client_tls(ctx, tls_options{}, ec);
  REQUIRE_FALSE(ec);
  CHECK(SSL_CTX_get_min_proto_version(ctx.native_handle()) == TLS1_2_VERSION);
  tls_options insecure;
  insecure.insecure = true;
  boost::asio::ssl::context lax(boost::asio::ssl::context::tls_client);
  configure_client_tls(lax, insecure, ec);
  CHECK(SSL_CTX_get_min_proto_version(lax.native_handle()) == TLS1_2_VERSION);
}
