// The shared rate's arithmetic (rate_bucket.hpp).

#include "engine/src/rate_bucket.hpp"

#include <catch2/catch.hpp>

using namespace dibs;
using std::chrono::microseconds;

TEST_CASE("a block of an unused record starts now and moves the schedule on by its slots", "[rate][shared-rate]") {
  const auto g = grant_block({}, 1'000'000, 5, 100'000);
  CHECK(g.block.granted == 5);
  CHECK(g.block.starts_in == microseconds(0));
  CHECK(g.block.paused_for == microseconds(0));
  CHECK(g.next.tat_us == 1'500'000);
  CHECK(g.next.paused_until_us == 0);
}

TEST_CASE("blocks taken at once by several processes follow one another", "[rate][shared-rate]") {
  rate_bucket_state s;
  std::int64_t expected_start = 0;
  for (int process = 0; process < 4; ++process) {
    const auto g = grant_block(s, 1'000'000, 5, 100'000);  // all at the same store time
    CHECK(g.block.starts_in == microseconds(expected_start));
    expected_start += 500'000;
    s = g.next;
  }
  CHECK(s.tat_us == 3'000'000);  // 20 slots of 0.1 s from 1 s: nobody shares a slot
}

TEST_CASE("slots left unused in the past are gone, not saved up for a burst", "[rate][shared-rate]") {
  const rate_bucket_state s{1'200'000, 0};
  const auto g = grant_block(s, 9'000'000, 2, 100'000);
  CHECK(g.block.starts_in == microseconds(0));
  CHECK(g.next.tat_us == 9'200'000);
}

TEST_CASE("a pause holds every block until it ends, and is told", "[rate][shared-rate]") {
  auto s = pause_bucket({}, 1'000'000, 3'000'000);
  CHECK(s.paused_until_us == 4'000'000);
  s = pause_bucket(s, 2'000'000, 500'000);  // a shorter one does not cut it short
  CHECK(s.paused_until_us == 4'000'000);
  CHECK(pause_bucket(s, 2'000'000, -5).paused_until_us == 4'000'000);
  const auto g = grant_block(s, 2'500'000, 1, 100'000);
  CHECK(g.block.starts_in == microseconds(1'500'000));
  CHECK(g.block.paused_for == microseconds(1'500'000));
  CHECK(g.next.tat_us == 4'100'000);
  CHECK(paused_for_us(s, 5'000'000) == 0);
}

TEST_CASE("nonsense asks are taken as the least: one slot, one microsecond", "[rate][shared-rate]") {
  const auto g = grant_block({}, 10, 0, 0);
  CHECK(g.block.granted == 1);
  CHECK(g.next.tat_us == 11);
}

TEST_CASE("a block is half a second of the rate, at least one slot", "[rate][shared-rate]") {
  CHECK(block_size(45.0 / 60) == 1);  // ip-api's 45/min: every request asks the store
  CHECK(block_size(10) == 5);
  CHECK(block_size(20) == 10);
  CHECK(block_size(0) == 1);
  CHECK(block_size(1e12) == 100000);
}
