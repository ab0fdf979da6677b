// How many items a shard claims now: the dispatcher's prefetch decision as a pure function of what
// the shard holds, unit-tested without a store or an io_context (tests/unit/test_claim_plan.cpp).
//
// Keep up to `ahead` items claimed beyond what runs, unless outcomes are piling up unwritten (the
// store is down: claiming more would only grow memory and leases). A claim waits until half a
// batch fits, unless pipelines are idle for want of items: claims of a few rows each would cost the
// store a statement per few rows. Items waiting for the API count only while the circuit is open:
// while it is closed they are settled within the probe interval and must not stop the calls that
// tell one item's trouble from an outage.
#pragma once

#include <cstddef>

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

}  // namespace dibs
