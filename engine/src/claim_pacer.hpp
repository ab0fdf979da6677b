// When a shard's dispatcher claims next (shard.cpp), as a pure clock-driven object unit-tested
// without a store (tests/unit/test_claim_pacer.cpp). At once while claims bring items; after a
// claim that brought nothing, or failed, after a wait that doubles from `min` up to `max`, so an
// idle or failing store is asked less and less often; at once again, the wait back at `min`, when
// a claim brings items, the shard is woken (engine::wake) or unparked.
#pragma once

#include <algorithm>
#include <chrono>

namespace dibs {

class claim_pacer {
 public:
  using clock = std::chrono::steady_clock;
  claim_pacer(std::chrono::milliseconds min, std::chrono::milliseconds max, clock::time_point now)
      : min_(min), max_(max), wait_(min), next_(now) {}

  // Claim at once; the next idle wait is `min` again.
  void reset(clock::time_point now) {
    wait_ = min_;
    next_ = now;
  }
  // Claim at once, the idle wait as it was (a resume after a pause: the store is no less idle).
  void claim_now(clock::time_point now) { next_ = now; }
  // The claim brought nothing, or failed: the next one after the wait, which then doubles.
  void idle(clock::time_point now) {
    next_ = now + wait_;
    wait_ = std::min(wait_ * 2, max_);
  }

  bool due(clock::time_point now) const { return now >= next_; }
  clock::time_point next() const { return next_; }
  // The wait the next idle() sets (what a log line's "retrying in" says).
  std::chrono::milliseconds wait() const { return wait_; }

 private:
  std::chrono::milliseconds min_, max_, wait_;
  clock::time_point next_;
};

}  // namespace dibs
