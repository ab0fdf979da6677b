// When a periodic refresh is due, and who does it: of the callers that find it due at once,
// exactly one takes it (a compare-and-swap); the rest go on without waiting. Times are the
// caller's steady readings, so tests give their own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace dibs::mongo {

class refresh_gate {
 public:
  using steady = std::chrono::steady_clock;
  explicit refresh_gate(steady::duration interval) : interval_(interval) {}

  // A refresh was made at `at` (the next is due an interval later).
  void mark(steady::time_point at) { last_ns_.store(at.time_since_epoch().count()); }
  // True for the one caller that takes the refresh due at `now`; false when none is due or
  // another caller took it first.
  bool take(steady::time_point now) {
    const auto now_ns = now.time_since_epoch().count();
    auto last = last_ns_.load();
    if (steady::duration(now_ns - last) < interval_) return false;
    return last_ns_.compare_exchange_strong(last, now_ns);
  }

 private:
  steady::duration interval_;
  std::atomic<steady::rep> last_ns_{0};
};

}  // namespace dibs::mongo
