// The flags every engine-running command shares (`demo`, `enrich`): how many pipelines and
// shards, claims, leases and attempts, and where the summary goes; and the end of a run that
// every such command prints the same way. (How the API is called: api_flags.)
#pragma once

#include "run_engine.hpp"
#include "trace_flags.hpp"

#include <dibs/engine_config.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dibs::cli {

struct engine_flags {
  std::size_t concurrency = 1000;
  std::size_t shards = 0;
  std::size_t claim_batch = 100;
  std::string lease = "60s";
  std::string grace = "1s";
  int max_attempts = 5;
  std::string max_processing = "0";
  std::size_t api_down_after = 5;  // engine_config::circuit_trip_after
  std::string summary_json;
  bool no_progress = false;
  int metrics_port = -1;  // -1: none
  std::string metrics_address = "127.0.0.1";
  std::vector<std::string> metrics_hosts;  // Host names the controls accept besides loopback ones
  std::string control_key_file;            // --control-key-file (else DIBS_CONTROL_KEY)
  std::string worker_id;  // --worker-id: engine_config::worker_prefix ("" = host-pid)
  trace_flags traces;     // --otlp-endpoint: apply() it to the config, finish() ends it

  void add_to(CLI::App& cmd);
  // Validated; throws std::invalid_argument naming the flag. Shards never exceed pipelines.
  engine_config config() const;
  // How run_engine_in_foreground runs it, `total` items expected (0: unknown).
  foreground_options foreground(std::uint64_t total) const;
  // `--summary-json -`: the summary JSON goes to stdout, so every other message goes to stderr.
  bool summary_to_stdout() const { return summary_json == "-"; }
  // Before the run, so that a refusal stops the command before it claims anything (throws
  // std::invalid_argument naming the flag):
  //   - opens --summary-json FILE as the journal is (adapters/jsonl/private_file.hpp: a symbolic
  //     link or anything but a regular file at FILE is refused, never followed; a new file is
  //     private, 0600);
  //   - with --metrics-port, reads the controls' key: --control-key-file (secret_file.hpp), else
  //     DIBS_CONTROL_KEY; none: only the dashboard's buttons change the run.
  void prepare();
  // Writes --summary-json (a file, or stdout for "-") and prints the machine-readable last line,
  // on `report` (stdout, or stderr when stdout carries data).
  void finish(const run_result& result, std::FILE* report) const;

 private:
  std::shared_ptr<int> summary_fd_;  // the --summary-json file, from prepare() (closed with the last copy)
  std::string control_key_;          // from prepare()
};

}  // namespace dibs::cli
