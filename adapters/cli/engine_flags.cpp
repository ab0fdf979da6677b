#include "engine_flags.hpp"

#include "duration_flag.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

namespace dibs::cli {

void engine_flags::add_to(CLI::App& cmd) {
  cmd.add_option("--concurrency", concurrency, "pipelines for the process, split across shards")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd.add_option("--shards", shards, "io_context threads (0 = one per core)")->capture_default_str();
  cmd.add_option("--claim-batch", claim_batch, "documents per claim")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  cmd.add_option("--lease", lease, "lease length (renewed while a call runs)")->capture_default_str();
  cmd.add_option("--grace", grace, "how long past its expiry a lease is taken over")->capture_default_str();
  cmd.add_option("--max-attempts", max_attempts, "claims before a retried document is failed")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--max-processing", max_processing, "abandon a call running longer than this and retry the document (0 = never)")
      ->capture_default_str();
  cmd.add_option("--api-down-after", api_down_after,
                 "after this many API-level failures in a row (refused, unresolvable, timed out, 5xx) treat the API as "
                 "down: send nothing but one probe (1 s, doubling to 30 s) until it answers; the documents wait under "
                 "their leases and spend no attempt (0 = never)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd.add_option("--summary-json", summary_json, "also write the summary figures to this JSON file");
  cmd.add_flag("--no-progress", no_progress, "no live progress line");
  cmd.add_option("--metrics-port", metrics_port,
                 "serve GET /metrics (Prometheus), GET /status, POST /pause, POST /resume on 127.0.0.1 at this port (0: any free one, logged); "
                 "a POST needs the header X-Dibs-Control: 1")
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--metrics-host", metrics_hosts,
                 "a Host name the controls also accept (any port), e.g. the name a reverse proxy forwards; repeatable");
}

engine_config engine_flags::config() const {
  engine_config cfg;
  cfg.concurrency = concurrency;
  cfg.shards = shards;
  cfg.claim_batch = claim_batch;
  cfg.lease = duration_flag("--lease", lease);
  cfg.grace = duration_flag("--grace", grace);
  cfg.max_attempts = max_attempts;
  cfg.max_processing = duration_flag("--max-processing", max_processing);
  cfg.circuit_trip_after = api_down_after;
  if (cfg.effective_shards() > cfg.concurrency) cfg.shards = cfg.concurrency;
  cfg.validate();
  return cfg;
}

void engine_flags::finish(const run_result& result) const {
  if (!summary_json.empty()) {
    std::ofstream out(summary_json);
    out << result.summary.json() << "\n";
    if (!out) std::fprintf(stderr, "dibs: could not write %s\n", summary_json.c_str());
  }
  std::printf("%s\n", result.summary.line().c_str());
  std::fflush(stdout);
}

}  // namespace dibs::cli
