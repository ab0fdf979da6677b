// The exit codes of `dibs`, one contract for every subcommand so that a script can tell a clean run
// from one with failed items, a refusal at start-up, a run cut short and a graceful stop.
#pragma once

#include <stdexcept>

namespace dibs::cli::exit_code {

// The command ended and nothing failed in this run.
inline constexpr int ok = 0;
// The run ended and some items failed in this run (the summary says how many and why).
inline constexpr int items_failed = 1;
// Usage or start-up error: bad flag, subcommand or value, bad URI, store unreachable or unusable at
// start, a pre-flight check refused (template field missing, API unreachable), missing table/columns.
inline constexpr int startup_error = 2;
// The run was cut short by an error after it started (e.g. the store was lost for good).
inline constexpr int cut_short = 3;
// A call budget (--max-calls, --budget) was spent: nothing more was claimed; the last line says
// which, and when it renews. Items that failed in the same run make it 1 (items_failed): they
// need a look first; the budget's line is printed all the same.
inline constexpr int budget_spent = 4;
// The API said the account can make no more calls (OpenAI's insufficient_quota, a spend cap
// reached): nothing more was claimed, the items it held went back unspent; the last line says the
// API's words. Comes before failed items: no item is at fault, and no run goes on without a fix.
inline constexpr int account_spent = 5;
// Stopped by SIGINT / SIGTERM: a graceful stop, the summary is still printed (128 + signal number,
// as shells report it).
inline constexpr int interrupted = 130;
inline constexpr int terminated = 143;

}  // namespace dibs::cli::exit_code

namespace dibs::cli {

// The API said, before or while the run went, that the account can make no more calls: the
// command ends with exit_code::account_spent and these words.
class account_spent_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a run ended, as the exit status sees it.
struct run_end {
  int stop_signal = 0;      // SIGINT or SIGTERM when a signal stopped it, else 0
  bool follow = false;      // --follow: a signal is the normal way to end
  bool drained = false;     // nothing pending or leased in the store afterwards
  unsigned long long failed_this_run = 0;
};

// The exit status of enrich and demo: a signal first (unless following), then failed items, then
// work left undone with no signal to explain it.
int run_exit_code(const run_end& end);

}  // namespace dibs::cli
