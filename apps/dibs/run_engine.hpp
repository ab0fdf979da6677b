// Runs an engine in the foreground the way a command-line user expects: SIGINT/SIGTERM stop it
// gracefully (a second signal stops it at once), and a live progress line (progress_line.hpp) is
// drawn on stderr when stderr is a terminal. When it is not (a pipe, a file, a log collector) no
// progress is written at all: the summary at the end and GET /status or /metrics
// (--metrics-port) say how a run goes, without a line every few seconds in the logs.
#pragma once

#include <dibs/admin_store.hpp>
#include <dibs/engine.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dibs::cli {

struct run_result {
  run_summary summary;
  bool interrupted = false;
  int stop_signal = 0;  // the first signal that stopped the run (SIGINT, SIGTERM), else 0
  // "the API: 2520 calls made, 1529 answered 429 (too many requests)": for the run's end report,
  // where the user looks ("" when no call was made).
  std::string api_calls;
};

struct foreground_options {
  std::uint64_t total = 0;  // items expected (for done/total and the ETA), 0 when unknown
  bool progress = true;     // the progress line, when stderr is a terminal
  // >= 0: serve GET /status, GET /metrics, POST /pause, POST /resume at `metrics_address` on
  // that port (0: any free one) while the engine runs; POSTs only from this host.
  int metrics_port = -1;
  std::string metrics_address = "127.0.0.1";
  std::vector<std::string> metrics_hosts;  // Host names accepted besides the own ones (a proxy's)
  // The key programs' POSTs carry (Authorization: Bearer KEY); "" when none was given: only the
  // dashboard's buttons (from this host) then change the run.
  std::string control_key;
  // The store the controls administer (GET /workers' store part, POST /release, POST /retry);
  // nullptr: those answer 404.
  admin_store* admin = nullptr;
};

run_result run_engine_in_foreground(engine& e, const foreground_options& o);

}  // namespace dibs::cli
