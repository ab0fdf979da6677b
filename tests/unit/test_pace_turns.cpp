// The turns of an origin's pace (origin_limit::take_turn), shared by every shard's client.
#include <dibs/http/origin_limits.hpp>

#include <catch2/catch.hpp>

#include <chrono>

using namespace dibs::http;
using namespace std::chrono_literals;

TEST_CASE("pace turns: none needed until the API refuses, then one per interval, nothing booked ahead", "[pace]") {
  // At a limit of one call at a time: a refusal then is the rate's (above it, it lowers the limit).
  adaptive_settings one;
  one.initial = 1;
  origin_limit l("http://api:80", one);
  auto now = origin_limit::clock::now();
  origin_limit::clock::time_point at{};
  CHECK(l.take_turn(now, at));  // unpaced: every request goes
  // 400 answers through in a second, then a refusal: paced at 0.85 of what was sent.
  for (int i = 0; i < 400; ++i) {
    l.sent(false);
    l.answered(1ms, 200, false, now + 2500us * i);
  }
  now += 1s;
  l.sent(false);
  const auto d = l.answered(1ms, 503, false, now);
  CHECK(d.changed);
  CHECK_FALSE(d.advice.empty());
  const double per_s = l.pace();
  REQUIRE(per_s > 300);
  REQUIRE(per_s < 400);
  const auto interval = std::chrono::duration_cast<origin_limit::clock::duration>(std::chrono::duration<double>(1.0 / per_s));
  CHECK(l.take_turn(now, at));
  CHECK(l.take_turn(now, at));  // a turn missed by less than an interval is not lost
  CHECK_FALSE(l.take_turn(now, at));  // the next turn is an interval away ...
  CHECK(at > now);
  CHECK(at <= now + interval);
  CHECK_FALSE(l.take_turn(now, at));  // ... and asking again books nothing: the same turn
  CHECK(at <= now + interval);
  const auto turn = at;
  CHECK(l.take_turn(turn, at));
  // A refusal that said when to come back moves no pace (its pause is honored elsewhere).
  l.answered(1ms, 429, true, now + 2ms);
  CHECK(l.pace() == per_s);
  CHECK(l.view().pace_decreases == 1);
  // It is heard with the pause the caller took (paused_by_api): an hour's is a quota spent, and
  // moves nothing; a second's is a refusal as any other (a token bucket's Retry-After: 1), and
  // moves the pace as a bare one does.
  auto later = now + 2s;
  for (int i = 0; i < 50; ++i) {
    l.sent(false);
    l.answered(1ms, 200, false, later + 3ms * i);
  }
  later += 200ms;
  l.sent(false);
  CHECK_FALSE(l.paused_by_api(429, std::chrono::hours(1), 1ms, later).changed);
  CHECK(l.view().pace_decreases == 1);
  l.sent(false);
  CHECK(l.paused_by_api(429, 1s, 1ms, later + 1ms).changed);
  CHECK(l.view().pace_decreases == 2);
}
