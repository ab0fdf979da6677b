// The pace of requests to one API origin that limits its rate, found from its refusals (pure:
// the caller passes the time and its counts; unit-tested without a server).
//
// Why: an API that allows N requests a second (nginx limit_req, a gateway's quota) refuses the
// rest with 429 or 503, often without Retry-After. Fewer requests in flight do not help when one
// kept-alive connection alone sends ten times the rate, and every refused item spends an attempt:
// with the concurrency limit at 1, 2,000 items against nginx at 300 r/s got 70-190 answers a
// second and some items failed after five refusals. So on the first refusal the origin is paced
// (requests spaced out in time), below what it was sent lately, and then, as TCP finds a path's
// capacity (additive increase, multiplicative decrease, here on a rate):
//   - down by `decrease` on a refusal of a request sent after the last decrease, and by the share
//     of answers that got through since (at most by half: refused 4 in 5, the pace was 5 times
//     too fast), and only when an answer got through since: a rate limit lets some requests
//     through; an API that refuses everything is down (the breaker's matter), and must not drive
//     the pace towards 0;
//   - up by `growth_per_s` of itself per second of answers, while the pace holds requests back
//     (without that demand there is nothing to learn: a run held back by its own rate or
//     concurrency does not raise it); by `recover_per_s` while far under the rate the last
//     refusal came at (a deep cut is soon undone, as TCP's slow start up to its threshold).
// Between a refusal and the one after, the pace spends most of its time just under the API's
// rate: from 0.85 of it back to it at 10% a second takes 1.6 s. It never sinks under an eighth of
// the most answers a window got through (see floor_of_best).
#pragma once

#include <chrono>
#include <cstdint>

namespace dibs::http {

struct pace_settings {
  // The pace x this on a refusal, and x the share of answers that got through since the last
  // decrease, no lower than `deepest_share`.
  double decrease = 0.85;
  double deepest_share = 0.5;
  double growth_per_s = 0.10;  // ... and x (1 + this) per second of answers held back by it,
  double recover_per_s = 0.5;  // ... or this while under `recover_below` x the rate last refused
  double recover_below = 0.8;
  double min_per_s = 0.1;      // never slower than this (one request in 10 s) ...
  // ... nor than this share of the most answers that got through in a window: an API that
  // refuses some items whatever the rate (a 503 for one kind of key) would otherwise sink the
  // pace at each of them, as random loss sinks TCP's window.
  double floor_of_best = 0.125;
  // The send rate a first refusal starts the pace from is measured over two windows of this
  // (started afresh when no answer came for two).
  std::chrono::milliseconds window{250};
};

class rate_finder {
 public:
  using clock = std::chrono::steady_clock;

  rate_finder(pace_settings s, clock::time_point now);

  // Requests per second allowed now; 0 while the origin is not paced (it never refused).
  double per_second() const { return rate_; }

  // The origin's counts so far: requests sent, and of them the ones that waited for the pace.
  // Called before each answered(): how fast requests went out is what a first refusal paces.
  void counted(std::uint64_t sent, std::uint64_t waited, clock::time_point now);

  // An answer came; `refused`: a 429 or 503 (the API limits its rate). `sent_at`: when its
  // request went out. True when the pace changed.
  bool answered(bool refused, clock::time_point sent_at, clock::time_point now);

  // The requests per second sent lately (over one or two windows).
  double sent_per_second(clock::time_point now) const;

  // The pace's floor now (min_per_s, or floor_of_best of the best window's answers).
  double floor() const;
  // The range the pace moved in, and how often it went down (0 each while never paced).
  double lowest() const { return lowest_; }
  double highest() const { return highest_; }
  std::uint64_t decreases() const { return decreases_; }

 private:
  void set_rate(double r);

  pace_settings s_;
  double rate_ = 0;
  // Sends counted in the current window and the one before it.
  clock::time_point window_start_;
  std::uint64_t window_base_ = 0;  // `sent` when the window started
  std::uint64_t sent_ = 0;
  std::uint64_t previous_sends_ = 0;
  std::uint64_t through_total_ = 0, window_through_base_ = 0;  // answers that got through
  double best_through_per_s_ = 0;  // the most of them in a window
  clock::duration previous_length_{};
  // Demand: a request waited for the pace since the last growth.
  std::uint64_t waited_ = 0, waited_seen_ = 0;
  clock::time_point grown_at_{};
  // The last decrease, and the answers since: got through, and refused (of requests sent after it).
  clock::time_point decreased_at_{};
  double refused_at_ = 0;  // the rate requests went at when the last decrease came
  std::uint64_t got_through_ = 0, refused_ = 0;
  double lowest_ = 0, highest_ = 0;
  std::uint64_t decreases_ = 0;
};

}  // namespace dibs::http
