// The exit status of a run (exit_codes.hpp).
#include "exit_codes.hpp"

#include <csignal>

namespace dibs::cli {

int run_exit_code(const run_end& end) {
  if (end.stop_signal != 0 && !end.follow) return end.stop_signal == SIGTERM ? exit_code::terminated : exit_code::interrupted;
  if (end.failed_this_run > 0) return exit_code::items_failed;
  if (!end.drained && !end.follow) return exit_code::cut_short;
  return exit_code::ok;
}

}  // namespace dibs::cli
