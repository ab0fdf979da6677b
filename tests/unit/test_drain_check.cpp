// Whether a shard may end (engine/src/drain_check.hpp), without a store.
#include "engine/src/drain_check.hpp"

#include <catch2/catch.hpp>

using dibs::drain_from_open_count;
using dibs::drain_verdict;
using dibs::drained_by_stats;

TEST_CASE("a store that counts what is open settles a drain in one count") {
  CHECK(drain_from_open_count(0, 0) == drain_verdict::drained);
  CHECK(drain_from_open_count(0, 5) == drain_verdict::drained);
  // More open than this process holds: pending, expired or another worker's.
  CHECK(drain_from_open_count(1, 0) == drain_verdict::more_to_do);
  CHECK(drain_from_open_count(2000, 100) == drain_verdict::more_to_do);
  CHECK(drain_from_open_count(6, 5) == drain_verdict::more_to_do);
  // No more than it holds: a shard holding them looks again before the process ends.
  CHECK(drain_from_open_count(5, 5) == drain_verdict::drained);
  CHECK(drain_from_open_count(3, 5) == drain_verdict::drained);
}

TEST_CASE("a store without a count of what is open is asked its counts by state") {
  CHECK(drain_from_open_count(std::nullopt, 0) == drain_verdict::count_states);
  CHECK(drain_from_open_count(std::nullopt, 7) == drain_verdict::count_states);
}

TEST_CASE("by state, a store is drained with nothing pending, no lease expired and no live lease beyond ours") {
  dibs::store_stats s;
  CHECK(drained_by_stats(s, 0));
  s.leased_live = 3;
  CHECK(drained_by_stats(s, 3));
  CHECK_FALSE(drained_by_stats(s, 2));
  s.pending = 1;
  CHECK_FALSE(drained_by_stats(s, 10));
  s.pending = 0;
  s.leased_expired = 1;
  CHECK_FALSE(drained_by_stats(s, 10));
}
