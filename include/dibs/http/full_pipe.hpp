// Whether slow start has filled the pipe: more requests actually at the server no longer bring
// more answers a second (pure; unit-tested without a server, tests/unit/test_full_pipe.cpp).
//
// Why: slow start grows the limit eightfold a round trip while the latency holds, and ends on a
// latency rise or a loss. Some servers show neither as they fill: a TLS API whose handshake takes
// 50 ms held its latency (2.2 -> 2.4 ms) while the limit went 16 -> 128 and its answers a second
// did not grow past 16; each of the 112 new connections cost both sides a handshake's CPU (a fixed
// 128 ran 0.2 s slower than a fixed 32 over a 0.8 s run). A server that closes every connection
// after its answer (HTTP/1.0) is the same: more at once, no more answers, a new connection each.
// BBR leaves its startup when the delivery rate stops growing by a quarter a round trip for three
// round trips; here the limit is no measure of what is at the server (calls wait for connections
// being opened, a new connection's handshake is no request at the server), so answers a second are
// weighed against the requests actually in flight: a sample whose in-flight grew half again over
// the best sample's, with answers a second not a quarter higher, stalls; three stalls in a row and
// the pipe is full, at the most in flight that answered within 5% of the most answers a second (the
// connections of those samples are open already, and a server that answers as much at 32 as at
// 16 gains nothing from fewer: a Node server settled at 12-21 by the sample that answered most
// ran at 0.8 of a fixed 32).
//
// A sample spans at least `least_answers` answers and two round trips, each the median answer
// of slow start's last round (the answers of a sample come from requests of the one before: with
// one round trip, a sample right after an eightfold step reads the new in-flight against the old
// answers; with the lower quartile, against an API whose answers spread over 20-500 ms, the
// answers lagged the in-flight by three samples). It settles at the permits held (in flight, those
// opening a connection included), not at the requests at the server: where every call opens a
// connection, settling at the latter would cut the calls at the server again by the share opening.
#pragma once

#include <chrono>
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace dibs::http {

class full_pipe {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr std::uint64_t least_answers = 32;
  static constexpr double rate_gain = 1.25;     // answers a second a step must bring ...
  static constexpr double running_gain = 1.5;   // ... once the in-flight grew this much
  static constexpr int stalls_to_full = 3;
  static constexpr double settle_share = 0.95;  // of the most answers a second: where it settles

  explicit full_pipe(clock::time_point now) : start_(now) {}

  // A request starts with `running` requests at the server (itself included; not those waiting
  // for a connection or opening one) and `in_flight` holding the limit's permits (those opening
  // a connection as well: what the limit counts, and where it settles).
  void started(std::size_t running, std::size_t in_flight) {
    running_sum_ += static_cast<double>(running);
    in_flight_sum_ += static_cast<double>(std::max(running, in_flight));
    ++starts_;
  }
  void answered() { ++answers_; }
  // A round trip of slow start ended, its answers' median latency `latency`. Once the pipe is
  // full: the limit to settle at (the in-flight, permits held, of the sample chosen), else nothing.
  std::optional<double> round_ended(clock::time_point now, std::chrono::microseconds latency);
  // Starts over (slow start begins again: a new ceiling); the next round trip's end starts the
  // first sample.
  void restart() { *this = full_pipe(clock::time_point{}); }
  // Whether the most answers a second yet (by rate_gain over the best before) came with more than
  // `running` requests at the server on average: the current step of slow start has shown it
  // brought more answers (slow start's costly steps wait for it: adaptive_limit.hpp).
  std::uint64_t samples() const { return samples_; }  // samples taken since the start
  bool best_above(double running) const { return !since_best_.empty() && since_best_.front().running > running; }

 private:
  clock::time_point start_;
  std::uint64_t answers_ = 0;
  std::uint64_t starts_ = 0;
  double running_sum_ = 0, in_flight_sum_ = 0;
  double top_rate_ = 0;                      // the most answers a second of a sample
  // The samples since the best one (the one that last grew the answers by rate_gain: the first),
  // rate and in-flight: stalls_to_full + 1 at most before the pipe is full, and a new best resets
  // them.
  struct sample {
    double rate, running, in_flight;
  };
  std::vector<sample> since_best_;
  int stalls_ = 0;
  std::uint64_t samples_ = 0;
};

}  // namespace dibs::http
