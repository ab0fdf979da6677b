#include "engine_flags.hpp"

#include "duration_flag.hpp"
#include "secret_file.hpp"

#include "adapters/control/control_access.hpp"
#include <adapters/jsonl/private_file.hpp>

#include "engine/src/worker_id.hpp"

#include <boost/asio/ip/address.hpp>

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

namespace dibs::cli {

void engine_flags::add_to(CLI::App& cmd) {
  traces.add_to(cmd);
  cmd.add_option("--concurrency", concurrency,
                 "the most documents in flight for the process, split across shards; with an API, the ceiling of the "
                 "calls at once that dibs finds by itself (see --fixed-concurrency); with --batch-body, 256 batches' "
                 "rows by default")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd.add_option("--shards", shards, "io_context threads (0 = one per core, fewer when the concurrency is under 2 claim batches a core)")->type_name("N")->capture_default_str();
  cmd.add_option("--claim-batch", claim_batch, "documents per claim")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  cmd.add_option("--lease", lease, "lease length (renewed while a call runs)")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--grace", grace, "how long past its expiry a lease is taken over (an item given back for a retry is taken at its retry time, without it)")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--max-attempts", max_attempts, "claims before a retried document is failed")
      ->type_name("N")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--max-processing", max_processing, "abandon a call running longer than this and retry the document (0 = never)")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--api-down-after", api_down_after,
                 "after API-level failures (refused, unresolvable, timed out, 5xx) of this many different documents in "
                 "a row with no answer between them (5xx answers: over at least a second), treat the API as down: send nothing but one probe (1 s, doubling to 30 s) until it answers; the "
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
                 "a program's POST needs the key of --control-key-file: Authorization: Bearer KEY")
      ->type_name("PORT")
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--metrics-address", metrics_address,
                 "the address --metrics-port listens on: 0.0.0.0 (or ::, or one interface's address) lets another host "
                 "scrape /metrics; POSTs are still taken from this host only")
      ->type_name("ADDR")
      ->capture_default_str();
  cmd.add_option("--worker-id", worker_id,
                 "this process's name in the store's leases, the logs, dibs status and GET /workers (each shard adds "
                 "-<index>); dibs release --worker NAME frees its leases (default: host-pid, the pod name in Kubernetes)")
      ->type_name("NAME");
  cmd.add_option("--control-key-file", control_key_file,
                 "the key programs send with their POSTs to the controls (header Authorization: Bearer KEY): the first "
                 "line of this file, which only its owner may read (chmod 600); else the variable DIBS_CONTROL_KEY. "
                 "Without one, only the dashboard's buttons change the run")
      ->type_name("FILE");
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
  o.control_key = control_key_;
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

void engine_flags::prepare() {
  if (metrics_port >= 0) {
    std::optional<std::string> key;
    std::string from = "DIBS_CONTROL_KEY";
    if (!control_key_file.empty()) {
      key = read_secret_file(control_key_file, "--control-key-file");
      from = "--control-key-file '" + control_key_file + "'";
    } else {
      key = secret_from_env("DIBS_CONTROL_KEY");
    }
    if (key) {
      if (const auto problem = http::control_key_problem(*key); !problem.empty())
        throw std::invalid_argument("the key of " + from + " " + problem);
      control_key_ = *key;
    }
  } else if (!control_key_file.empty()) {
    throw std::invalid_argument("--control-key-file is the key of the controls: give --metrics-port too");
  }
  if (summary_json.empty() || summary_to_stdout() || summary_fd_) return;
  int fd = -1;
  try {
    // Not truncated yet: a run that fails before its end leaves the last summary as it was.
    fd = jsonl::open_private(summary_json, O_WRONLY | O_CREAT, "the summary file", "summary_json");
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string("--summary-json: ") + e.what());
  }
  summary_fd_ = std::shared_ptr<int>(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
}

void engine_flags::finish(const run_result& result, std::FILE* report) const {
  traces.finish(report);  // the last spans first: the summary is the last word
  if (summary_to_stdout()) {
    std::fprintf(stdout, "%s\n", result.summary.json().c_str());
  } else if (!summary_json.empty()) {
    const std::string text = result.summary.json() + "\n";
    const bool written = summary_fd_ && ::ftruncate(*summary_fd_, 0) == 0 && jsonl::write_all_at(*summary_fd_, text, 0);
    if (!written) std::fprintf(stderr, "dibs: could not write %s\n", summary_json.c_str());
  }
  std::fprintf(report, "%s\n", result.summary.line().c_str());
  std::fflush(stdout);
  std::fflush(report);
}

}  // namespace dibs::cli
