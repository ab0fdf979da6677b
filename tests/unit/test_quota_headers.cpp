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

TEST_CASE("a reset in epoch milliseconds, a server clock near ours, and the exactness of a reset", "[quota]") {
  // Epoch milliseconds (some APIs): 25.25 s from now, not 11 years (read as epoch seconds).
  auto q = read_quota({{"X-RateLimit-Remaining", "3"}, {"X-RateLimit-Reset", "1795852825250"}}, now);
  REQUIRE(q);
  CHECK(q->reset_in == milliseconds(25'250));
  CHECK(q->exact);
  // A Date less than 2 s from this clock says nothing of a skew (it has whole seconds only): the
  // reset is read by this clock, to the millisecond.
  const auto later = now + milliseconds(400);
  q = read_quota({{"X-RateLimit-Remaining", "3"}, {"X-RateLimit-Reset", "1795852801"}, {"Date", "Sat, 28 Nov 2026 08:00:00 GMT"}},
                 later);
  CHECK(q->reset_in == milliseconds(600));
  // A whole number of seconds from now is rounded up by servers: not exact; a fraction is.
  CHECK_FALSE(read_quota({{"RateLimit-Remaining", "3"}, {"RateLimit-Reset", "2"}}, now)->exact);
  CHECK(read_quota({{"RateLimit-Remaining", "3"}, {"RateLimit-Reset", "0.25"}}, now)->exact);
  // The policy's window is kept.
  q = read_quota({{"RateLimit", "\"default\";r=7;t=3"}, {"RateLimit-Policy", "\"default\";q=100;w=60"}}, now);
  CHECK(q->window == milliseconds(60'000));
}
