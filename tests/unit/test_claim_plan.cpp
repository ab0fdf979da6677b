// The dispatcher's prefetch decision (engine/src/claim_plan.hpp), without a store.
#include "engine/src/claim_plan.hpp"

#include <catch2/catch.hpp>

using dibs::claim_view;
using dibs::items_to_claim;

namespace {
// 100 pipelines, a batch of 100 ahead, nothing held, the store writing.
claim_view idle() { return claim_view{100, 100, 0, 0, 0, 0, true, false, 0, 1000}; }
}  // namespace

TEST_CASE("an idle shard claims a whole batch ahead, no more") {
  CHECK(items_to_claim(idle()) == 100);
}

TEST_CASE("a claim waits until half a batch fits, unless pipelines starve") {
  auto v = idle();
  v.in_flight = 100;
  v.ready = 60;  // 40 fit: less than half a batch, and nothing starves
  CHECK(items_to_claim(v) == 0);
  v.ready = 50;  // 50 fit: half a batch
  CHECK(items_to_claim(v) == 50);
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
  CHECK(items_to_claim(v) == 50);
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
