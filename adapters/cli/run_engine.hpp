// Runs an engine in the foreground the way a command-line user expects: SIGINT/SIGTERM stop it
// gracefully (a second signal stops it at once), and a live progress line is drawn on stderr
// when stderr is a terminal.
#pragma once

#include <dibs/engine.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dibs::cli {

struct run_result {
  run_summary summary;
  bool interrupted = false;
  int stop_signal = 0;  // the first signal that stopped the run (SIGINT, SIGTERM), else 0
};

// `total` is the number of items expected (for done/total and the ETA), 0 when unknown.
// `metrics_port` >= 0: serve GET /status, GET /metrics, POST /pause, POST /resume on loopback
// at that port (0: any free one) while the engine runs; `metrics_hosts`: Host names accepted
// besides the loopback ones (a reverse proxy's).
run_result run_engine_in_foreground(engine& e, std::uint64_t total, bool progress, int metrics_port = -1,
                                    const std::vector<std::string>& metrics_hosts = {});

}  // namespace dibs::cli
