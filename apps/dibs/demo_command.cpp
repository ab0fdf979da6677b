// `dibs demo`: the whole product on the embedded default. Seeds the memory store with documents
// {_id, originatingIp, location: null}, starts the ip-api stub in-process, enriches every
// document through HTTP, and shows the result.
#include "commands.hpp"
#include "exit_codes.hpp"
#include "api_flags.hpp"
#include "duration_flag.hpp"
#include "engine_flags.hpp"

#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

namespace dibs::cli {

command add_demo_command(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Enrich N generated documents through the in-process ip-api stub, on the memory store");
  struct flags {
    engine_flags run;
    api_flags api;
    bool batch = false;
    std::size_t docs = 10'000;
    std::size_t distinct = 0;
    long latency_ms = 0;
    std::uint64_t seed = 42;
    std::size_t samples = 3;
  };
  auto f = std::make_shared<flags>();
  f->run.add_to(*sub);
  f->api.backoff_base = "100ms";
  f->api.backoff_max = "5s";
  f->api.add_to(*sub, false);
  sub->add_flag("--batch", f->batch, "look addresses up --batch-size at a time through the stub's POST /batch");
  sub->add_option("--docs", f->docs, "documents to seed")->type_name("N")->check(CLI::Range(std::size_t{0}, std::size_t{100'000'000}))->capture_default_str();
  sub->add_option("--distinct", f->distinct,
                  "draw the documents' addresses from N addresses, the popular ones far more often (the same address "
                  "sending many messages; 0: every document its own random address)")
      ->type_name("N")->capture_default_str();
  sub->add_option("--latency-ms", f->latency_ms, "the stub's delay before each answer")->type_name("MS")->check(CLI::Range(0L, 600'000L))->capture_default_str();
  sub->add_option("--seed", f->seed, "random seed for the generated addresses")->type_name("N")->capture_default_str();
  sub->add_option("--samples", f->samples, "documents shown at the end")->type_name("N")->capture_default_str();
  sub->footer(
      "Examples:\n"
      "  dibs demo --docs 100000 --latency-ms 20\n"
      "  dibs demo --batch --batch-size 100 --concurrency 50\n"
      "  dibs demo --docs 20000 --distinct 2000 --rate 1000/s --reuse-answers   (one call per address)\n"
      "  dibs demo --docs 1000 --no-progress --summary-json -   (the summary JSON alone on stdout)");

  return [f] {
    auto cfg = f->run.config();
    f->api.fit_shards(cfg);
    f->run.prepare();
    f->run.traces.apply(cfg, {});
    // With --summary-json -, stdout carries the JSON alone: the rest is told on stderr.
    std::FILE* report = f->run.summary_to_stdout() ? stderr : stdout;

    // The stub gets its own thread; on a small machine it shares the cores with the shards.
    stub::ipapi_stub api(stub::stub_options::loopback(std::chrono::milliseconds(f->latency_ms)));
    api.start();

    auto st = std::make_shared<memory_store>();
    st->seed_random_ips(f->docs, f->seed, f->distinct);

    (f->batch ? f->api.batch_url : f->api.url) = api.base_url() + (f->batch ? "/batch" : "/json/{originatingIp}");
    if (f->api.reuse_answers == "store")
      throw std::invalid_argument("--reuse-answers store keeps answers in a database (dibs enrich --store mysql://, "
                                  "postgresql://, mongodb://); the demo's store is in memory: use --reuse-answers");
    auto processors = f->api.factory("originatingIp");

    std::fprintf(report, "demo: %zu documents {_id, originatingIp, location: null} in the memory store%s\n", f->docs,
                 f->distinct > 0 ? (", drawn from " + std::to_string(std::min(f->distinct, f->docs)) + " addresses").c_str() : "");
    std::fprintf(report, "demo: stub at %s (latency %ld ms); %zu shard(s), concurrency %zu, claim batch %zu%s\n",
                api.base_url().c_str(), f->latency_ms, cfg.effective_shards(), cfg.concurrency, cfg.claim_batch,
                f->batch ? (", " + std::to_string(f->api.batch_size) + " addresses per POST /batch").c_str() : "");
    std::fflush(report);

    engine e(cfg, st, std::move(processors));
    e.set_rate_control(f->api.limiter());  // POST /rate changes it while the demo runs
    const auto result = run_engine_in_foreground(e, f->run.foreground(f->docs));
    api.stop();

    const auto s = st->stats_now();
    std::fprintf(report, "\ndemo: %llu done, %llu failed, %llu pending, %llu leased; stub served %llu requests on %llu connections\n",
                (unsigned long long)s.done, (unsigned long long)s.failed, (unsigned long long)s.pending,
                (unsigned long long)(s.leased_live + s.leased_expired), (unsigned long long)api.requests(),
                (unsigned long long)api.connections());
    if (f->samples > 0 && f->docs > 0) {
      std::fprintf(report, "demo: sample documents:\n");
      const std::size_t n = std::min(f->samples, f->docs);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t index = 1 + i * (f->docs / n);
        std::fprintf(report, "  %s\n", st->document_json(std::to_string(index)).c_str());
      }
    }
    f->run.finish(result, report);
    return run_exit_code({result.stop_signal, false, s.drained(), result.summary.failed});
  };
}

}  // namespace dibs::cli
