// The dispatcher's prefetch decision (engine/src/claim_plan.hpp), without a store.
#include "engine/src/claim_plan.hpp"

#include <catch2/catch.hpp>

#include <chrono>

using dibs::claim_view;
using dibs::items_to_claim;

namespace {
// 100 pipelines, a batch of 100 ahead, nothing held, the store writing.
claim_view idle() { return claim_view{100, 100, 0, 0, 0, 0, true, false, 0, 1000}; }
}  // namespace

TEST_CASE("an idle shard claims a whole batch ahead, no more") {
  CHECK(items_to_claim(idle()) == 100);
}

TEST_CASE("a claim waits until half a batch fits, unless pipelines starve, and is then a whole batch") {
  auto v = idle();
  v.in_flight = 100;
  v.ready = 60;  // 40 fit: less than half a batch, and nothing starves
  CHECK(items_to_claim(v) == 0);
  v.ready = 50;  // 50 fit: half a batch, and a whole batch is claimed (not 50: a claim's round trips for half)
  CHECK(items_to_claim(v) == 100);
  v.in_flight = 90;  // pipelines idle for want of items: even a small claim
  v.ready = 0;
  CHECK(items_to_claim(v) == 100);
  v.ready = 1;  // not starving once one item waits
  v.in_flight = 170;
  CHECK(items_to_claim(v) == 0);
}

TEST_CASE("nothing is claimed while outcomes pile up unwritten") {
  auto v = idle();
  v.unwritten = 999;
  CHECK(items_to_claim(v) == 100);
  v.unwritten = 1000;
  CHECK(items_to_claim(v) == 0);
}

TEST_CASE("items waiting for the API count only while the circuit is open") {
  auto v = idle();
  v.waiting = 200;
  CHECK(items_to_claim(v) == 100);  // closed: they are settled soon, they must not stop claims
  v.circuit_closed = false;
  CHECK(items_to_claim(v) == 0);
}

TEST_CASE("items to run again take room like running ones") {
  auto v = idle();
  v.rerun = 150;
  CHECK(items_to_claim(v) == 100);  // half a batch fits
  v.rerun = 160;
  v.ready = 1;  // 39 fit, and nothing starves
  CHECK(items_to_claim(v) == 0);
}

TEST_CASE("a probe claims one item, and only when none is in hand") {
  auto v = idle();
  v.probe = true;
  v.unwritten = 5000;  // a probe goes even while writes lag: it is how the run learns the API is back
  CHECK(items_to_claim(v) == 1);
  v.ready = 1;
  CHECK(items_to_claim(v) == 0);
}

TEST_CASE("an adaptive limit of a few pipelines claims only a few ahead") {
  claim_view v{4, 8, 4, 0, 0, 0, true, false, 0, 1000};
  CHECK(items_to_claim(v) == 8);
  v.ready = 8;
  CHECK(items_to_claim(v) == 0);
}

// The prefetch under a processor's own limit (an adaptive limit on the API): what the pipelines
// finish in the horizon, at least the limit, at most a batch.
TEST_CASE("under a limit of its own a shard claims what it finishes soon, at least the limit, at most a batch, a batch before it knows") {
  using dibs::claim_ahead;
  const std::chrono::seconds horizon{2};
  CHECK(claim_ahead(4, 100, 0.0, horizon) == 100);    // nothing measured yet: a batch (the limit is in its slow start)
  CHECK(claim_ahead(4, 100, 10.0, horizon) == 20);    // 10/s: two seconds' worth
  CHECK(claim_ahead(4, 100, 8000.0, horizon) == 100); // a fast API: a batch
  CHECK(claim_ahead(300, 100, 10.0, horizon) == 100); // never beyond a batch
}

TEST_CASE("a fast API's finish rate is known within 50 ms, not after half a second of tiny claims") {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::time_point{} + std::chrono::hours(1);
  dibs::finish_rate r(t0);
  CHECK(r.per_second(t0 + std::chrono::milliseconds(10)) == 0);
  for (int i = 0; i < 400; ++i) r.finished();
  // 400 items in 50 ms: 8,000 a second, at the first short window's end.
  CHECK(r.per_second(t0 + std::chrono::milliseconds(50)) == Approx(8000));
}

TEST_CASE("while nothing finishes the finish rate stays unknown, then windows of half a second average it") {
  using clock = std::chrono::steady_clock;
  using ms = std::chrono::milliseconds;
  const auto t0 = clock::time_point{} + std::chrono::hours(1);
  dibs::finish_rate r(t0);
  // A slow API (2 s to answer): short windows with nothing finished measure nothing.
  CHECK(r.per_second(t0 + ms(60)) == 0);
  CHECK(r.per_second(t0 + ms(120)) == 0);
  r.finished();
  r.finished();
  CHECK(r.per_second(t0 + ms(170)) == Approx(40));  // 2 in the 50 ms since the last window
  // From now on half-second windows: 100 more within 100 ms change nothing yet...
  for (int i = 0; i < 100; ++i) r.finished();
  CHECK(r.per_second(t0 + ms(270)) == Approx(40));
  // ...and half a second after the last window, the new window (204/s) is averaged with the last.
  for (int i = 0; i < 2; ++i) r.finished();
  CHECK(r.per_second(t0 + ms(670)) == Approx((40.0 + 102 / 0.5) / 2));
}
