// The arithmetic of the shared rate's record (shared_rate_store.hpp), from its state and the
// store's now, in microseconds since the epoch by the store's clock. Pure: the record is read with
// the store's now, these decide, and the result is written only over what was read
// (adapters/stores/record_swap.hpp).
//
// The record is a GCRA schedule: `tat` is when the next free slot starts. A block of n slots
// starts at the latest of tat, now and the end of a pause, and moves tat n intervals on; slots
// the past left unused are gone (never saved up), so processes together never go faster than
// the rate, bar the slots of one block that a process sends late. A schedule of tokens saves up
// to a bucket's capacity: its block may start that far back (now - saved), its past slots due at once.
#pragma once

#include "shared_rate_store.hpp"

#include <cstdint>

namespace dibs {

struct rate_bucket_state {
  std::int64_t tat_us = 0;           // the next free slot (0: never used)
  std::int64_t paused_until_us = 0;  // no slot before this (0: never paused)
};

struct rate_block_grant {
  rate_bucket_state next;  // what the record holds afterwards
  rate_block block;        // what the process is told
};

// `want` slots of `interval_us`; want 0 is taken as 1, interval below 1 us as 1 us. `saved_us`:
// how far behind now the block may start (rate_block_request::saved).
rate_block_grant grant_block(const rate_bucket_state& s, std::int64_t now_us, std::uint32_t want, std::int64_t interval_us,
                             std::int64_t saved_us = 0);

// The record after a pause of `for_us` from now: the later of the pause it had and this one.
rate_bucket_state pause_bucket(const rate_bucket_state& s, std::int64_t now_us, std::int64_t for_us);

// How long the record still pauses its origin (0 when it does not).
std::int64_t paused_for_us(const rate_bucket_state& s, std::int64_t now_us);

// The slots a process takes at once for `per_second`: half a second's worth, at least one, so
// processes together go over the rate by at most one block each.
std::uint32_t block_size(double per_second);

}  // namespace dibs
