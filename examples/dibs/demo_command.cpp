// `dibs demo`: the whole product on the embedded default. Seeds the memory store with documents
// {_id, originatingIp, location: null}, starts the ip-api stub in-process, enriches every
// document through HTTP, and shows the result.
#include "commands.hpp"
#include "duration_flag.hpp"
#include "run_engine.hpp"

#include <adapters/http/http_processor.hpp>
#include <adapters/memory/memory_store.hpp>
#include <examples/stub/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>

namespace dibs::cli {

command add_demo_command(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Enrich N generated documents through the in-process ip-api stub, on the memory store");
  struct flags {
    std::size_t docs = 10'000;
    std::size_t concurrency = 1000;
    std::size_t shards = 0;
    long latency_ms = 0;
    std::size_t claim_batch = 100;
    std::string lease = "60s";
    std::string grace = "1s";
    int max_attempts = 5;
    std::uint64_t seed = 42;
    std::string summary_json;
    std::size_t samples = 3;
    bool no_progress = false;
    std::string rate;
  };
  auto f = std::make_shared<flags>();
  sub->add_option("--docs", f->docs, "documents to seed")->check(CLI::Range(std::size_t{0}, std::size_t{100'000'000}))->capture_default_str();
  sub->add_option("--concurrency", f->concurrency, "pipelines for the process, split across shards")->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))->capture_default_str();
  sub->add_option("--shards", f->shards, "io_context threads (0 = one per core)")->capture_default_str();
  sub->add_option("--latency-ms", f->latency_ms, "the stub's delay before each answer")->check(CLI::Range(0L, 600'000L))->capture_default_str();
  sub->add_option("--claim-batch", f->claim_batch, "documents per claim")->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))->capture_default_str();
  sub->add_option("--lease", f->lease, "lease length (renewed while in flight)")->capture_default_str();
  sub->add_option("--grace", f->grace, "how long past its expiry a lease is taken over")->capture_default_str();
  sub->add_option("--max-attempts", f->max_attempts, "claims before a retried document is failed")->check(CLI::Range(1, 1000))->capture_default_str();
  sub->add_option("--seed", f->seed, "random seed for the generated addresses")->capture_default_str();
  sub->add_option("--samples", f->samples, "documents shown at the end")->capture_default_str();
  sub->add_option("--summary-json", f->summary_json, "also write the summary figures to this JSON file");
  sub->add_flag("--no-progress", f->no_progress, "no live progress line");
  sub->add_option("--rate", f->rate, "at most this many API requests, N/s or N/min, for the whole process");

  return [f] {
    engine_config cfg;
    cfg.concurrency = f->concurrency;
    cfg.shards = f->shards;
    cfg.claim_batch = f->claim_batch;
    cfg.lease = duration_flag("--lease", f->lease);
    cfg.grace = duration_flag("--grace", f->grace);
    cfg.max_attempts = f->max_attempts;
    if (cfg.effective_shards() > cfg.concurrency) cfg.shards = cfg.concurrency;
    cfg.validate();

    // The stub gets its own thread; on a small machine it shares the cores with the shards.
    stub::ipapi_stub api({"127.0.0.1", 0, std::chrono::milliseconds(f->latency_ms), 1});
    api.start();

    auto st = std::make_shared<memory_store>();
    st->seed_random_ips(f->docs, f->seed);

    http::processor_options popts{http::url_template::parse(api.base_url() + "/json/{originatingIp}"), {}, true, {}, {}};
    popts.backoff_base = std::chrono::milliseconds(100);
    popts.backoff_max = std::chrono::milliseconds(5'000);
    popts.limiter = make_limiter(f->rate);

    std::printf("demo: %zu documents {_id, originatingIp, location: null} in the memory store\n", f->docs);
    std::printf("demo: stub at %s (latency %ld ms); %zu shard(s), concurrency %zu, claim batch %zu\n",
                api.base_url().c_str(), f->latency_ms, cfg.effective_shards(), cfg.concurrency, cfg.claim_batch);
    std::fflush(stdout);

    engine e(cfg, st, http::make_http_processor_factory(std::move(popts)));
    const auto result = run_engine_in_foreground(e, f->docs, !f->no_progress);
    api.stop();

    const auto s = st->stats_now();
    std::printf("\ndemo: %llu done, %llu failed, %llu pending, %llu leased; stub served %llu requests on %llu connections\n",
                (unsigned long long)s.done, (unsigned long long)s.failed, (unsigned long long)s.pending,
                (unsigned long long)(s.leased_live + s.leased_expired), (unsigned long long)api.requests(),
                (unsigned long long)api.connections());
    if (f->samples > 0 && f->docs > 0) {
      std::printf("demo: sample documents:\n");
      const std::size_t n = std::min(f->samples, f->docs);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t index = 1 + i * (f->docs / n);
        std::printf("  %s\n", st->document_json(std::to_string(index)).c_str());
      }
    }
    if (!f->summary_json.empty()) {
      std::ofstream out(f->summary_json);
      out << result.summary.json() << "\n";
      if (!out) std::fprintf(stderr, "dibs: could not write %s\n", f->summary_json.c_str());
    }
    std::printf("%s\n", result.summary.line().c_str());
    std::fflush(stdout);
    if (result.interrupted) return 130;
    return s.drained() ? 0 : 1;
  };
}

}  // namespace dibs::cli
