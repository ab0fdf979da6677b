// How many requests one API origin is sent at once, found from its answers (pure: the caller
// passes the time; unit-tested without a server).
//
// Why: the right number depends on the server. A threaded server from a language's standard
// library serves a handful at once and drops connections past its small backlog; a CDN serves
// thousands. A fixed number is either too small for the one or a flood for the other, so the
// limit is found the way TCP finds a path's capacity, on the signals Vector's adaptive request
// concurrency and Netflix's concurrency-limits use:
//   - slow start: from `initial`, doubled each round trip while answers come back at the latency
//     floor and the requests in flight reach the limit (no evidence without demand);
//   - then additive increase: +1 per round trip while the round trip's latency is at or below its
//     moving average and less than twice the floor (queueing as long as the work itself means
//     more requests only wait longer);
//   - multiplicative decrease on loss (429, 502-504, timeouts, resets, refused or dropped
//     connections: the server says it is overloaded) and on latency inflation (a round trip's
//     latency above the moving average by more than `deviation_scale` deviations: by the ratio
//     of the two, at least 0.5 and at most `latency_decrease`);
//   - at most one decision per round trip (a window at least as long as the recent latency), so
//     a burst of errors from one overload costs one decrease, not one per error; and the round
//     trip after a decrease, whose answers were sent before it, decreases nothing.
// Latency is the time from the request written to the answer's first byte: waiting for a
// permit, a connection or a rate slot is not the server's doing. A round trip's latency is the
// median of its answers: a few slow items (a slow tail) say nothing of the server's load, while
// queueing delays every answer. The floor is the lowest round trip of the last `floor_memory`,
// so a server that became slower for good is, after a while, judged by its new floor.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dibs::http {

struct adaptive_settings {
  double initial = 2;
  double min = 1;
  double max = 1000;              // the ceiling (--concurrency's share)
  double floor_tolerance = 0.5;   // slow start ends when a window's mean passes floor × (1 + this)
  double deviation_scale = 2.5;   // latency inflation: mean > average + scale × deviation
  double inflation_floor = 0.1;   // ... and by at least this share of the average (noise)
  double ewma_alpha = 0.4;        // weight of the newest window in the average and deviation
  double latency_decrease = 0.9;  // limit × this on latency inflation
  double loss_decrease = 0.7;     // limit × this on loss
  std::chrono::microseconds min_window{5'000};  // a decision waits at least this long
  std::chrono::seconds floor_memory{10};
};

// Why the limit last went down (or "" when it never did).
enum class limit_signal { none, latency, throttled, unavailable, timeout, reset, refused, dropped_handshake };
const char* to_string(limit_signal s);

class adaptive_limit {
 public:
  using clock = std::chrono::steady_clock;

  adaptive_limit(adaptive_settings s, clock::time_point now);

  // The number of requests that may be in flight now (at least 1).
  std::size_t limit() const { return static_cast<std::size_t>(limit_); }
  // A request starts; `in_flight` counts it, `waiting` the requests queued behind the limit.
  // Demand that reaches the limit is what allows it to grow.
  void started(std::size_t in_flight, std::size_t waiting);
  // An answer's first byte came `latency` after its request was written. True when this ended a
  // round trip, so a decision was made (the limit may or may not have changed).
  bool answered(std::chrono::microseconds latency, clock::time_point now);
  // The server (or the path to it) signalled overload. True as for answered().
  bool overloaded(limit_signal why, clock::time_point now);
  // A new ceiling (the dashboard's concurrency control); the limit is clipped to it.
  void set_max(double max);

  // What /metrics and the dashboard show.
  bool slow_start() const { return slow_start_; }
  std::chrono::microseconds min_latency() const { return min_latency_; }     // 0 before any answer
  std::chrono::microseconds recent_latency() const { return recent_; }       // the last window's
  limit_signal last_decrease() const { return last_decrease_; }
  std::size_t lowest() const { return static_cast<std::size_t>(lowest_); }   // the range it moved in
  std::size_t highest() const { return static_cast<std::size_t>(highest_); }
  std::uint64_t decreases() const { return decreases_; }
  double max() const { return s_.max; }

 private:
  // Ends the window when it has lasted a round trip; true when the limit changed.
  bool maybe_decide(clock::time_point now);
  void set_limit(double l);
  void decrease(double factor, limit_signal why);

  adaptive_settings s_;
  double limit_;
  bool slow_start_ = true;
  // The current window.
  clock::time_point window_start_;
  std::vector<std::uint32_t> samples_us_;
  bool limited_ = false;  // the requests in flight reached the limit in this window
  double peak_ = 0;       // the most requests in flight in this window ...
  double prior_peak_ = 0;  // ... and in the one before
  limit_signal loss_ = limit_signal::none;
  // Across windows.
  double floor_us_ = 0;  // the lowest window latency of the floor's period (0: none yet)
  double floor_next_us_ = 0;  // the lowest of the period under way, the floor when it ends
  clock::time_point floor_period_start_;
  double average_us_ = 0;  // moving average of the window latencies
  double deviation_us_ = 0;
  bool cooling_ = false;  // the window after a decrease: its answers were sent before it
  std::chrono::microseconds min_latency_{0};
  std::chrono::microseconds recent_{0};
  limit_signal last_decrease_ = limit_signal::none;
  double lowest_, highest_;
  std::uint64_t decreases_ = 0;
};

}  // namespace dibs::http
