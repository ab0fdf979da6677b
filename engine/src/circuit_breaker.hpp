// Is the API down as a whole? A circuit breaker that decides it from the calls' outcomes alone
// (pure: the caller passes the time; tested without a server).
//
// Why: when the API is unreachable (refused, unresolvable, timing out, answering 5xx), every
// call fails for a reason that has nothing to do with the item. Spending the items' attempts on
// it would fail a whole queue during a bad minute. So a shard counts API-level failures of
// distinct items in a row (an item failing twice is one item's trouble, not a second witness);
// at `trip_after` of them the circuit opens (when the API answered them with 5xx, they must also
// span `min_outage`: a burst of 503s from an API that limits its rate is no outage): nothing is
// sent but one probe, after a backoff that doubles up to `probe_max` while the probes fail; only
// an answer from the API closes it.
//
// A probe is an item (a different one each time: the breaker remembers which were probed in this
// outage), sent for its own answer: never a request the API answered already (a call the API
// may bill that buys nothing).
//
//   closed  --trip_after distinct items' failures in a row (5xx: over min_outage)-->  open
//   open    --probe time reached, probe_sent(item)-------------------->  probing
//   probing --the probe's API-level failure--------------------------->  open (backoff doubled)
//   probing --the probe's call told nothing--------------------------->  open (same backoff)
//   any     --an answer from the API---------------------------------->  closed
// While probing, other calls' outcomes (sent before the circuit opened) change nothing: one
// probe at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

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
    // Failures the API answered (5xx) open the circuit only once the failures in a row span at
    // least this long (0: probe_min): an API that limits its rate answers some requests between
    // its 503s; one that is down answers none for seconds.
    millis min_outage{0};
  };

  explicit circuit_breaker(settings s) : s_(s), delay_(s.probe_min) {
    if (s_.min_outage.count() <= 0) s_.min_outage = s_.probe_min;
  }

  // `item`'s call failed for an API-level reason. True if this opened the circuit (it was closed).
  // `answered`: the API answered it, with a 5xx. An API that limits its rate answers bursts of
  // 503s with answers between them, so failures the API answered open the circuit only once the
  // failures in a row also span min_outage; an API that answers nothing (refused, reset, timed
  // out) is down at trip_after items.
  bool failed(const std::string& item, const std::string& why, clock::time_point now, bool answered = false);
  // Time went by: the failures in a row (enough of them) now span min_outage with no answer in
  // between, though no call failed since (every pipeline waits). True if this opened the circuit.
  bool outage_held(clock::time_point now);
  // The API answered a call (done, or an answer about the item). True if this closed the circuit.
  bool answered();
  // The circuit closes without an answer: nothing is left to tell an outage from the items' own
  // failures (the shard's stand_down). True if it was open.
  bool stand_down() { return answered(); }
  // The probe is being sent (only when open and probe_due()): `item`.
  void probe_sent(const std::string& item);
  // A call ended telling nothing of the API (abandoned, the processor threw): if it was the probe,
  // another is due after the same wait -- otherwise the breaker would wait for an answer forever.
  void inconclusive(const std::string& item, clock::time_point now);

  state current() const { return state_; }
  bool closed() const { return state_ == state::closed; }
  bool probe_due(clock::time_point now) const { return state_ == state::open && now >= next_probe_; }
  // `item` is the probe in flight.
  bool is_probe(const std::string& item) const { return state_ == state::probing && probe_ == item; }
  // `item` was a probe already in this outage (a different item is preferred).
  bool was_probed(const std::string& item) const { return probed_.count(item) > 0; }
  // Probes sent in this outage.
  std::size_t probes() const { return probed_.size(); }
  clock::time_point next_probe() const { return next_probe_; }
  millis probe_delay() const { return delay_; }
  millis min_outage() const { return s_.min_outage; }
  const std::string& last_reason() const { return last_reason_; }
  std::size_t failures_in_a_row() const { return streak_.size(); }

 private:
  void reopen(clock::time_point now) {
    state_ = state::open;
    next_probe_ = now + delay_;
  }

  settings s_;
  state state_ = state::closed;
  std::vector<std::string> streak_;  // the distinct items of the failures in a row
  std::size_t silent_ = 0;            // ... of which the API did not answer
  clock::time_point streak_since_{};  // the first of them
  millis delay_;
  clock::time_point next_probe_{};
  std::string last_reason_;
  std::string probe_;                     // the probe in flight
  std::unordered_set<std::string> probed_;  // the items probed in this outage
};

const char* to_string(circuit_breaker::state s);

}  // namespace dibs
