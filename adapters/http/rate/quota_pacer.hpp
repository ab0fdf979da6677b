// An API's quota held as the API counts it (one host's): fixed windows of `window` each allowing
// `limit` requests, the current one ending at a known time, and what each window has left. Every
// request takes a time from it so that no window, as the server counts it, gets more than it
// allows, and none gets a burst at its reset:
//   - in the window an answer speaks of, this process may send what it had sent there until that
//     answer's request went out plus what the answer says remains; the rest of the window's
//     requests are spread evenly to its end;
//   - every later window gets the limit less a margin (requests sent near a window's end may
//     arrive in the next one: answers taking 0-100 ms), spread evenly across it.
// The window's end comes from each reading (to the millisecond when the reset is an epoch or a
// fraction of a second; a whole-second count from now is rounded up by servers, so taken half a
// second early), its length from RateLimit-Policy or from two readings of consecutive windows
// (until then, the first reading's reset rounded up to a whole second, at least 1 s).
// The newest reading wins over times handed out before it: when it leaves a window fewer
// requests than were given times in it, those times are withdrawn (epoch() moves, and their
// holders take new ones). No time is ever more than `max_wait` (max_retry_after) away.
// Pure and single-threaded (rate_limiter holds one per host under its lock); unit-tested in
// tests/unit/test_quota_pacer.cpp.
#pragma once

#include "quota_headers.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace dibs::http {

class quota_pacer {
 public:
  using clock = std::chrono::steady_clock;

  explicit quota_pacer(clock::duration max_wait = std::chrono::hours(1)) : max_wait_(max_wait) {}

  // What an answer said of the quota; `sent`: when the request it answers went out.
  void read(const quota_reading& q, clock::time_point sent, clock::time_point now);
  // The time the next request may go: `earliest` or later, booked in its window; what the quota
  // adds to `earliest` (its spacing, the wait for the next window) is at most max_wait. Before a
  // reading: `earliest` (still counted, for the first reading).
  // A time taken and not used is not given back: the quota errs slow.
  clock::time_point take(clock::time_point earliest, clock::time_point now);

  bool pacing() const { return window_.count() > 0; }
  // Moves when times handed out were withdrawn: a holder of an older one takes a new time.
  std::uint64_t epoch() const { return epoch_; }
  // Requests each later window is given (the limit less the margin), and the windows' length.
  std::int64_t per_window() const { return per_window_; }
  clock::duration window() const { return window_; }
  // True once: the first time its caller finds the quota capped by max_wait (said once a host).
  bool first_capped() { return !std::exchange(capped_said_, true); }
  // The earliest end of a window that ends after `t`.
  clock::time_point end_after(clock::time_point t) const;

 private:
  struct booked {
    clock::time_point end;    // the window's end
    std::int64_t cap = 0;     // requests it may get from this process
    std::int64_t used = 0;    // times handed out in it
    clock::time_point next;   // the earliest time of its next request
  };
  booked& window_at(clock::time_point t);
  void withdraw_after(clock::time_point now);
  std::int64_t taken_between(clock::time_point from, clock::time_point to) const;

  clock::duration max_wait_;
  clock::duration window_{0};
  bool window_said_ = false;       // the length came from the API (policy) or two readings
  clock::time_point anchor_{};     // a window's end: every window ends at anchor_ + k * window_
  std::optional<clock::time_point> last_reading_end_;
  std::int64_t limit_ = 0;
  std::int64_t per_window_ = 0;
  std::deque<booked> windows_;     // the current window and those after it with times handed out
  std::deque<clock::time_point> taken_;  // times handed out, oldest first (the last two windows)
  std::uint64_t epoch_ = 0;
  clock::time_point last_{};       // the latest time handed out
  bool capped_said_ = false;
};

// The margin a window keeps: 5% of the limit, at least one request (none for a limit of 1).
std::int64_t quota_margin(std::int64_t limit);

}  // namespace dibs::http
