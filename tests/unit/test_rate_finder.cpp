// The pace of an origin that limits its rate (include/dibs/http/rate_finder.hpp): when it starts,
// how it goes down and up, and what does not move it.
#include <dibs/http/rate_finder.hpp>

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

namespace {
const auto t0 = rate_finder::clock::time_point{} + 1h;

// `n` requests sent over `over` from `at`, each answered (none refused), none waiting for a pace.
void sends(rate_finder& f, std::uint64_t& sent, std::uint64_t waited, int n, std::chrono::milliseconds over,
           rate_finder::clock::time_point at) {
  for (int i = 1; i <= n; ++i) {
    const auto now = at + over * i / n;
    f.counted(++sent, waited, now);
    f.answered(false, now, now);
  }
}

// `n` requests over a second from t0, all answered, then one refused at t0 + 1 s: the pace starts
// (at 0.85 of n a second).
void paced_after_a_second(rate_finder& f, std::uint64_t& sent, std::uint64_t waited, int n) {
  sends(f, sent, waited, n, 1000ms, t0);
  f.counted(sent, waited, t0 + 1000ms);
  REQUIRE(f.answered(true, t0 + 999ms, t0 + 1000ms));
}
}  // namespace

TEST_CASE("pace: none until the API refuses, then below what was sent lately", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0;
  sends(f, sent, 0, 1000, 1000ms, t0);  // 1,000 a second, all answered
  CHECK(f.per_second() == 0);
  CHECK(f.sent_per_second(t0 + 1000ms) == Approx(1000).epsilon(0.01));
  f.counted(++sent, 0, t0 + 1001ms);
  CHECK(f.answered(true, t0 + 1000ms, t0 + 1001ms));
  CHECK(f.per_second() == Approx(850).epsilon(0.02));  // 0.85 of 1,000 a second
  CHECK(f.decreases() == 1);
}

TEST_CASE("pace: one decrease per refusal of a request sent after the last one, and only once an answer got through",
          "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0;
  sends(f, sent, 0, 100, 100ms, t0);
  f.counted(sent, 0, t0 + 100ms);
  REQUIRE(f.answered(true, t0 + 99ms, t0 + 100ms));
  const double first = f.per_second();
  // Refusals of requests sent before the decrease: they say nothing of the new pace.
  CHECK_FALSE(f.answered(true, t0 + 99ms, t0 + 101ms));
  // Sent after it, but no answer got through since: an API refusing everything is down, not
  // limiting its rate; the pace must not sink towards nothing while it is.
  CHECK_FALSE(f.answered(true, t0 + 102ms, t0 + 103ms));
  CHECK(f.per_second() == first);
  f.answered(false, t0 + 104ms, t0 + 105ms);
  CHECK(f.answered(true, t0 + 106ms, t0 + 107ms));
  CHECK(f.per_second() < first);
  CHECK(f.decreases() == 2);
}

TEST_CASE("pace: refusals before any answer start nothing", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  f.counted(5, 0, t0 + 5ms);
  CHECK_FALSE(f.answered(true, t0 + 1ms, t0 + 5ms));
  CHECK(f.per_second() == 0);
}

TEST_CASE("pace: grows 10% a second while it holds requests back, not otherwise", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0, waited = 0;
  paced_after_a_second(f, sent, waited, 100);
  const double start = f.per_second();  // 85 a second
  CHECK(start == Approx(85).epsilon(0.02));
  // A second of answers, none of whose requests waited for the pace: no demand, no growth.
  sends(f, sent, waited, 80, 1000ms, t0 + 1000ms);
  CHECK(f.per_second() == start);
  // A second of answers whose requests each waited: about 10% more (compounded per answer).
  auto at = t0 + 2000ms;
  for (int i = 1; i <= 85; ++i) {
    const auto now = at + 1000ms * i / 85;
    f.counted(++sent, ++waited, now);
    f.answered(false, now, now);
  }
  CHECK(f.per_second() == Approx(start * 1.105).epsilon(0.01));
  CHECK(f.lowest() == Approx(start));
  CHECK(f.highest() == Approx(f.per_second()));
}

TEST_CASE("pace: a refusal while the pace is not reached lowers it from what was sent", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0;
  paced_after_a_second(f, sent, 0, 1000);  // 850 a second
  // Then only 400 a second go out (something else holds them back) and one is refused.
  sends(f, sent, 0, 200, 500ms, t0 + 1000ms);
  f.counted(sent, 0, t0 + 1505ms);
  REQUIRE(f.answered(true, t0 + 1500ms, t0 + 1505ms));
  CHECK(f.per_second() < 400);
  CHECK(f.per_second() > 300);
}

TEST_CASE("pace: never under its floor", "[pace]") {
  pace_settings s;
  s.min_per_s = 1;
  rate_finder f(s, t0);
  f.counted(1, 0, t0 + 10s);
  f.answered(false, t0 + 10s, t0 + 10s);
  f.counted(2, 0, t0 + 20s);
  REQUIRE(f.answered(true, t0 + 20s, t0 + 20s));  // 2 requests in 20 s: 0.085/s, floored
  CHECK(f.per_second() == 1);
}

TEST_CASE("pace: most answers refused since the last decrease, down by half at once", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0;
  paced_after_a_second(f, sent, 0, 1000);
  const double first = f.per_second();  // 850 a second
  // Since then: 4 refused, 1 through, then the refusal that decides.
  auto at = t0 + 1001ms;
  for (int i = 0; i < 4; ++i) CHECK_FALSE(f.answered(true, at, at + 1ms));
  f.answered(false, at, at + 2ms);
  f.counted(sent, 0, at + 3ms);
  REQUIRE(f.answered(true, at, at + 3ms));
  CHECK(f.per_second() == Approx(first * 0.85 * 0.5).epsilon(0.01));
}

TEST_CASE("pace: refusals whatever the rate sink it no lower than an eighth of the best window's answers", "[pace]") {
  // 400 answers a second got through at first; then one key in ten is refused (its bug, not the
  // rate): each refusal lowers the pace, and growth can't keep up.
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0, waited = 0;
  sends(f, sent, waited, 400, 1000ms, t0);
  auto now = t0 + 1000ms;
  for (int i = 0; i < 2000; ++i) {
    now += 10ms;
    f.counted(++sent, ++waited, now);
    f.answered(i % 10 == 9, now - 1ms, now);
  }
  CHECK(f.floor() == Approx(50).epsilon(0.05));
  CHECK(f.per_second() >= f.floor());
  CHECK(f.lowest() == Approx(f.floor()));
}

TEST_CASE("pace: a refusal right after a pause is measured against the pace, not the pause", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0, waited = 0;
  paced_after_a_second(f, sent, waited, 1000);
  const double paced = f.per_second();  // 850 a second
  // 30 s without an answer (the API said stop, or the breaker was open), then two answers and a
  // refusal: 3 requests over 30 s is no rate to pace at.
  auto now = t0 + 31s;
  for (int i = 0; i < 2; ++i) {
    now += 1ms;
    f.counted(++sent, ++waited, now);
    f.answered(false, now, now);
  }
  f.counted(++sent, waited, now + 1ms);
  REQUIRE(f.answered(true, now, now + 1ms));
  CHECK(f.per_second() > paced * 0.8);
}

TEST_CASE("pace: refusals while nothing got through (an outage) are not counted in the next cut", "[pace]") {
  rate_finder f(pace_settings{}, t0);
  std::uint64_t sent = 0;
  paced_after_a_second(f, sent, 0, 1000);
  const double paced = f.per_second();
  // The API is down for 30 s: every request refused, a second apart.
  auto now = t0 + 2s;
  for (int i = 0; i < 30; ++i, now += 1s) {
    f.counted(++sent, 0, now);
    CHECK_FALSE(f.answered(true, now - 1ms, now));
  }
  f.counted(++sent, 0, now);
  f.answered(false, now - 1ms, now);
  f.counted(++sent, 0, now + 1ms);
  REQUIRE(f.answered(true, now, now + 1ms));
  CHECK(f.per_second() == Approx(paced * 0.85).epsilon(0.01));  // one refusal: 0.85, no share
}
