#include "engine_flags.hpp"

#include "duration_flag.hpp"

#include <dibs/worker_id.hpp>

#include <boost/asio/ip/address.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

namespace dibs::cli {

void engine_flags::add_to(CLI::App& cmd) {
  cmd.add_option("--concurrency", concurrency,
                 "the most documents in flight for the process, split across shards; with an API, the ceiling of the "
                 "calls at once that dibs finds by itself (see --fixed-concurrency)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd.add_option("--shards", shards, "io_context threads (0 = one per core, fewer when the concurrency is under 2 claim batches a core)")->type_name("N")->capture_default_str();
  cmd.add_option("--claim-batch", claim_batch, "documents per claim")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  cmd.add_option("--lease", lease, "lease length (renewed while a call runs)")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--grace", grace, "how long past its expiry a lease is taken over")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--max-attempts", max_attempts, "claims before a retried document is failed")
      ->type_name("N")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--max-processing", max_processing, "abandon a call running longer than this and retry the document (0 = never)")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--api-down-after", api_down_after,
                 "after API-level failures (refused, unresolvable, timed out, 5xx) of this many different documents in "
                 "a row treat the API as down: send nothing but one probe (1 s, doubling to 30 s) until it answers; the "
                 "documents wait under their leases and spend no attempt (0 = never)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd.add_option("--summary-json", summary_json,
                 "also write the summary figures to this JSON file; - writes them to stdout (and every other line to stderr)")
      ->type_name("FILE");
  cmd.add_flag("--no-progress", no_progress, "no live progress line (there is none when stderr is not a terminal)");
  cmd.add_option("--metrics-port", metrics_port,
                 "serve the dashboard (GET /, open it in a browser), GET /metrics (Prometheus), GET /status, GET /workers, "
                 "POST /pause, /resume, /release, /concurrency, /rate, /retry at this port (0: any free one, logged); "
                 "a POST needs the header X-Dibs-Control: 1")
      ->type_name("PORT")
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--metrics-address", metrics_address,
                 "the address --metrics-port listens on: 0.0.0.0 (or ::, or one interface's address) lets another host "
                 "scrape /metrics; POST /pause and /resume are still taken from this host only")
      ->type_name("ADDR")
      ->capture_default_str();
  cmd.add_option("--worker-id", worker_id,
                 "this process's name in the store's leases, the logs, dibs status and GET /workers (each shard adds "
                 "-<index>); dibs release --worker NAME frees its leases (default: host-pid, the pod name in Kubernetes)")
      ->type_name("NAME");
  cmd.add_option("--metrics-host", metrics_hosts,
                 "a Host name the controls also accept (any port), e.g. the name a reverse proxy forwards; repeatable")
      ->type_name("NAME");
}

foreground_options engine_flags::foreground(std::uint64_t total) const {
  foreground_options o;
  o.total = total;
  o.progress = !no_progress;
  o.metrics_port = metrics_port;
  o.metrics_address = metrics_address;
  o.metrics_hosts = metrics_hosts;
  return o;
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
  if (!worker_id.empty()) {
    if (const auto problem = worker_id_problem(worker_id); !problem.empty())
      throw std::invalid_argument("--worker-id '" + worker_id + "' " + problem);
    cfg.worker_prefix = worker_id;
  }
  if (cfg.effective_shards() > cfg.concurrency) cfg.shards = cfg.concurrency;
  cfg.validate();
  boost::system::error_code bad;
  boost::asio::ip::make_address(metrics_address, bad);
  if (bad)
    throw std::invalid_argument("--metrics-address '" + metrics_address +
                                "' is not an IP address (127.0.0.1, 0.0.0.0 for every interface, ::, ...)");
  return cfg;
}

void engine_flags::finish(const run_result& result, std::FILE* report) const {
  if (summary_to_stdout()) {
    std::fprintf(stdout, "%s\n", result.summary.json().c_str());
  } else if (!summary_json.empty()) {
    std::ofstream out(summary_json);
    out << result.summary.json() << "\n";
    if (!out) std::fprintf(stderr, "dibs: could not write %s\n", summary_json.c_str());
  }
  std::fprintf(report, "%s\n", result.summary.line().c_str());
  std::fflush(stdout);
  std::fflush(report);
}

}  // namespace dibs::cli
