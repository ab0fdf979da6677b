// The live progress line `dibs demo` and `dibs enrich` draw on a terminal, as pure functions of
// the figures (no clock, no terminal): what it says, and what it drops to fit a narrow one.
//
//   done 9120/10000  failed 3  1820 docs/s  ETA 0m01s  in flight 64  retries 12
//   PAUSED  done 9120/10000  failed 3  0 docs/s  ETA ?  in flight 0  retries 12
//   API DOWN: probing, 40 waiting  done 9120/10000  failed 3  ...
//   done 9990/10000  failed 3  retrying 7  ETA ?  ...    (only retries waiting their backoff left)
//   done 9120/10000  failed 3  1820 docs/s  ...  retries 12  reused 90%   (--reuse-answers)
//   done 120/2000  failed 0  310 docs/s  ETA 0m06s  in flight 24 (API limit 24)  retries 0
//   done 9120/10000  no data 41  failed 3  1820 docs/s  ...   (the API's "no data" answers)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

namespace dibs::cli {

struct progress_figures {
  std::uint64_t total = 0;  // items expected at the start (0: unknown, no ETA)
  std::uint64_t done = 0;
  std::uint64_t failed = 0;
  std::uint64_t no_data = 0;  // done with the API's "no data" answer (shown when some are)
  std::int64_t in_flight = 0;
  std::uint64_t retries = 0;          // given back to be tried again, so far
  std::int64_t retries_waiting = 0;   // of those, not claimed again yet (an estimate)
  double rate = 0;                    // finished items per second over the recent window
  bool paused = false;
  bool api_down = false;
  std::int64_t waiting_for_api = 0;
  // Answer reuse: items that made their call, and items answered by another's (reused or joined).
  std::uint64_t answer_calls = 0;
  std::uint64_t answers_shared = 0;
  // The adaptive limit on the API's calls (summed over shards); -1: none (a fixed concurrency).
  std::int64_t api_limit = -1;
};

// "1m05s", "2h03m", "45s" never: always minutes and seconds under an hour ("0m45s").
std::string eta_text(double seconds);

// The line, at most `width` characters (0: no limit). The parts go in order of importance and the
// least important are dropped first (retries, in flight, the rate, the ETA); the state (paused,
// API down) and done/total always stay, cut at the width if even they don't fit.
std::string progress_line(const progress_figures& f, std::size_t width = 0);

// The rate over the last `window` (e.g. 10 s): finished items counted at each redraw, the rate
// from the oldest sample still inside the window. Before the window has two samples, 0.
class rate_window {
 public:
  explicit rate_window(std::chrono::milliseconds window) : window_(window) {}
  void add(std::chrono::steady_clock::time_point at, std::uint64_t finished);
  double per_second() const;

 private:
  std::chrono::milliseconds window_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> samples_;
};

// The terminal's width for stderr: TIOCGWINSZ, else $COLUMNS, else 80.
std::size_t terminal_width();

}  // namespace dibs::cli
