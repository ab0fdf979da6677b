// A request rate shared by every process that works on one store (`rate_scope store`): the
// store keeps, per API origin, a schedule of request slots, and each process takes its slots in
// small blocks by one atomic update timed by the store's own clock, so the limiter costs a round
// trip per block, not per request. A pause (the API said stop: 429, X-Rl: 0) is kept in the same
// record, so one process seeing it stops them all. The arithmetic is rate_bucket.hpp's; a store
// only moves the record's bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace dibs {

// A block of request slots: `granted` requests, the first `starts_in` from the store's now (may
// be negative: right away), the next ones one interval apart. `paused_for`: how long the origin
// is still paused by the store's clock (0 when it is not).
struct rate_block {
  std::uint32_t granted = 0;
  std::chrono::microseconds starts_in{0};
  std::chrono::microseconds paused_for{0};
};

// What a process asks for: `want` slots of `interval` each (its rate), for `origin`.
struct rate_block_request {
  std::string origin;
  std::uint32_t want = 1;
  std::chrono::microseconds interval{0};
  // How far behind the store's now the schedule may lag: the slots left unused within that span
  // may still be taken, at once (a token bucket's capacity: a minute of a tokens-a-minute limit,
  // full when unused, as the API's own bucket is). 0: slots the past left unused are gone.
  std::chrono::microseconds saved{0};
};

// Blocking calls (a process runs them on a thread of its own, never on a shard). Throw when the
// store can't be reached; the caller then sends nothing until it can.
class shared_rate_store {
 public:
  virtual ~shared_rate_store() = default;
  virtual rate_block take_block(const rate_block_request& r) = 0;
  // The API said stop: no process takes a slot for `origin` before `for_` from the store's now.
  virtual void pause(const std::string& origin, std::chrono::microseconds for_) = 0;
  // How long `origin` is still paused (0 when it is not).
  virtual std::chrono::microseconds paused_for(const std::string& origin) = 0;
};

}  // namespace dibs
