// Whether a shard whose claim came back empty (and which holds nothing) may end: the store has
// nothing left that this process does not hold. A pure decision over the store's counts, unit-tested
// without a store (tests/unit/test_drain_check.cpp).
//
// A store that counts each state with a command of its own (MongoDB: three counts) counts what is
// open (pending or leased) in one instead: none open, this shard is done; more open than this process
// holds, something is pending or leased by another worker. As many or fewer: another shard of this
// process holds items, and it looks again before it ends, so this one may end. The process's last
// shard holds nothing when it looks, and its answer is exact: nothing open. One command a look,
// where three were sent. A store without that count is asked its counts by state.
#pragma once

#include <dibs/store.hpp>

#include <cstdint>
#include <optional>

namespace dibs {

enum class drain_verdict { drained, more_to_do, count_states };

// From the count of open items, when the store has one (`open`: nullopt when it has none cheaper
// than its counts by state); `held`: the items this process holds (other shards' work).
drain_verdict drain_from_open_count(std::optional<std::uint64_t> open, std::uint64_t held);

// From the counts by state: nothing pending, no lease expired, and no live lease beyond ours.
bool drained_by_stats(const store_stats& s, std::uint64_t held);

}  // namespace dibs
