// How many items a shard claims now: the dispatcher's prefetch decision as a pure function of what
// the shard holds, unit-tested without a store or an io_context (tests/unit/test_claim_plan.cpp).
//
// Keep up to `ahead` items claimed beyond what runs, unless outcomes are piling up unwritten (the
// store is down: claiming more would only grow memory and leases). A claim waits until half a
// batch fits, unless pipelines are idle for want of items, and is then a whole batch (`ahead`):
// claims of a few rows each would cost the store a statement per few rows. So at most
// limit + 1.5 x ahead items are in hand. Items waiting for the API count only while the circuit is open:
// while it is closed they are settled within the probe interval and must not stop the calls that
// tell one item's trouble from an outage.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace dibs {

struct claim_view {
  std::size_t limit = 0;      // how many may run at once now (the shard's run_limit)
  std::size_t ahead = 0;      // how many to keep claimed beyond those (claim_ahead)
  std::size_t in_flight = 0;  // running
  std::size_t ready = 0;      // claimed, not started
  std::size_t rerun = 0;      // to run again now that the API answers
  std::size_t waiting = 0;    // waiting for the API
  bool circuit_closed = true;
  bool probe = false;         // the circuit is open and a probe item must be claimed
  std::size_t unwritten = 0;        // outcomes buffered, not yet written
  std::size_t unwritten_limit = 0;  // beyond which nothing more is claimed
};

// The number of items to claim now; 0 means wait.
std::size_t items_to_claim(const claim_view& v);

// How many items to keep claimed beyond those running under a processor's own limit (an adaptive
// limit on the API): what the pipelines finish within `horizon` at `per_second`, at least `limit`,
// at most `batch`; a batch while nothing is measured yet. Claimed items then wait `horizon` at most, yet a fast API
// behind a small limit is not fed by claims of a few items each.
std::size_t claim_ahead(std::size_t limit, std::size_t batch, double per_second, std::chrono::duration<double> horizon);

// The items a shard's pipelines finish per second lately, claim_ahead's measure: windows of half a
// second, each averaged with the last. Until the first item finishes, windows of 50 ms: a fast API
// is known within 50 ms, not after half a second of claims the size of its limit (a 2,000-item run
// against an API answering 8,000 a second lasts a quarter of a second, claims of 2-4 items a
// store round trip each).
class finish_rate {
 public:
  using clock = std::chrono::steady_clock;
  explicit finish_rate(clock::time_point now) : since_(now) {}
  void finished() { ++finished_; }
  // 0 until anything has finished.
  double per_second(clock::time_point now);

 private:
  std::uint64_t finished_ = 0;
  std::uint64_t finished_then_ = 0;
  clock::time_point since_;
  double rate_ = 0;
};

}  // namespace dibs
