// An API's quota read from its headers in every dialect dibs meets, and the spacing that makes
// what is left last to the window's end.
#include "adapters/http/rate/quota_headers.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;
using headers = std::vector<std::pair<std::string, std::string>>;
using std::chrono::milliseconds;

namespace {
// 2026-11-28 08:00:00 UTC
const auto now = std::chrono::system_clock::from_time_t(1'795'852'800);
}  // namespace

TEST_CASE("GitHub's X-RateLimit-*: the reset as epoch seconds, by the server's Date", "[quota]") {
  // The server's clock is 5 s behind this one: the window ends 30 s after its now, not 25 s after ours.
  const auto q = read_quota({{"X-RateLimit-Limit", "60"}, {"x-ratelimit-remaining", "12"}, {"X-RateLimit-Reset", "1795852825"},
                             {"Date", "Sat, 28 Nov 2026 07:59:55 GMT"}},
                            now);
  REQUIRE(q);
  CHECK(q->limit == 60);
  CHECK(q->remaining == 12);
  CHECK(q->reset_in == milliseconds(30'000));
  // Without a Date, by this machine's clock.
  CHECK(read_quota({{"X-RateLimit-Remaining", "1"}, {"X-RateLimit-Reset", "1795852825"}}, now)->reset_in == milliseconds(25'000));
  // Some send the reset as seconds from now.
  CHECK(read_quota({{"X-RateLimit-Remaining", "1"}, {"X-RateLimit-Reset", "1.5"}}, now)->reset_in == milliseconds(1'500));
}

TEST_CASE("the IETF drafts: RateLimit-* fields, and the RateLimit field in both its forms", "[quota]") {
  auto q = read_quota({{"RateLimit-Limit", "100"}, {"RateLimit-Remaining", "50"}, {"RateLimit-Reset", "30"}}, now);
  REQUIRE(q);
  CHECK((q->limit == 100 && q->remaining == 50 && q->reset_in == milliseconds(30'000)));
  q = read_quota({{"RateLimit", "limit=100, remaining=40, reset=20"}}, now);
  REQUIRE(q);
  CHECK((q->limit == 100 && q->remaining == 40 && q->reset_in == milliseconds(20'000)));
  q = read_quota({{"RateLimit", "\"default\";r=7;t=3"}, {"RateLimit-Policy", "\"default\";q=100;w=60"}}, now);
  REQUIRE(q);
  CHECK((q->limit == 100 && q->remaining == 7 && q->reset_in == milliseconds(3'000)));
  // No reset: the policy's window stands for it.
  q = read_quota({{"RateLimit", "\"default\";r=7"}, {"RateLimit-Policy", "\"default\";q=100;w=60"}}, now);
  CHECK(q->reset_in == milliseconds(60'000));
}

TEST_CASE("no quota said, or nonsense, is no reading", "[quota]") {
  CHECK_FALSE(read_quota({{"X-Rl", "0"}, {"X-Ttl", "5"}}, now));  // ip-api's own: its stop signal's
  CHECK_FALSE(read_quota({{"RateLimit-Remaining", "lots"}}, now));
  CHECK_FALSE(read_quota({{"X-RateLimit-Remaining", "-1"}}, now));
  CHECK_FALSE(read_quota({}, now));
}

TEST_CASE("what is left is spread to the window's end, one kept for a request on its way", "[quota]") {
  CHECK(quota_spacing({100, 51, milliseconds(10'250)}) == std::chrono::microseconds(205'000));  // 50 in 10.25 s
  // A reset in whole seconds ends within its last second: taken as its middle (50 in 9.5 s).
  CHECK(quota_spacing({100, 51, milliseconds(10'000)}) == std::chrono::microseconds(190'000));
  CHECK_FALSE(quota_spacing({100, 1, milliseconds(10'000)}));  // none left but the reserve: the caller pauses
  CHECK_FALSE(quota_spacing({100, 50, milliseconds(0)}));      // no time said: nothing to spread
  CHECK_FALSE(quota_spacing({100, 5001, milliseconds(1'000)}, 1, 1000.0));  // plenty: no pace
}
