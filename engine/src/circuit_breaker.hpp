// Is the API down as a whole? A circuit breaker that decides it from the calls' outcomes alone
// (pure: the caller passes the time; tested without a server).
//
// Why: when the API is unreachable (refused, unresolvable, timing out, answering 5xx), every
// call fails for a reason that has nothing to do with the item. Spending the items' attempts on
// it would fail a whole queue during a bad minute. So a shard counts API-level failures in a row;
// at `trip_after` the circuit opens: nothing is sent but one probe, after a backoff that doubles
// up to `probe_max` while the probes fail; the first call the API answers (even with an item-level
// error) closes it again.
//
//   closed  --trip_after API-level failures in a row-->  open
//   open    --probe time reached, probe_sent()------->  probing
//   probing --API-level failure---------------------->  open (backoff doubled)
//   probing --a call that tells nothing-------------->  open (same backoff)
//   any     --an answer from the API----------------->  closed
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace dibs {

class circuit_breaker {
 public:
  using clock = std::chrono::steady_clock;
  using millis = std::chrono::milliseconds;
  enum class state { closed, open, probing };

  struct settings {
    std::size_t trip_after = 5;  // 0: never opens
    millis probe_min{1000};
    millis probe_max{30000};
  };

  explicit circuit_breaker(settings s) : s_(s), delay_(s.probe_min) {}

  // A call failed for an API-level reason. True if this opened the circuit (it was closed).
  bool failed(const std::string& why, clock::time_point now);
  // The API answered a call (done, or an answer about the item). True if this closed the circuit.
  bool answered();
  // The probe is being sent (only when open and probe_due()).
  void probe_sent() { state_ = state::probing; }
  // A call ended telling nothing of the API (abandoned, the processor threw): if it was the probe,
  // another is due after the same wait -- otherwise the breaker would wait for an answer forever.
  void inconclusive(clock::time_point now) {
    if (state_ != state::probing) return;
    state_ = state::open;
    next_probe_ = now + delay_;
  }

  state current() const { return state_; }
  bool closed() const { return state_ == state::closed; }
  bool probe_due(clock::time_point now) const { return state_ == state::open && now >= next_probe_; }
  clock::time_point next_probe() const { return next_probe_; }
  millis probe_delay() const { return delay_; }
  const std::string& last_reason() const { return last_reason_; }
  std::size_t failures_in_a_row() const { return in_a_row_; }

 private:
  settings s_;
  state state_ = state::closed;
  std::size_t in_a_row_ = 0;
  millis delay_;
  clock::time_point next_probe_{};
  std::string last_reason_;
};

const char* to_string(circuit_breaker::state s);

}  // namespace dibs
