// `dibs enrich`: the real job. Claims documents in a store, calls the API for each,
// writes the answer back under the claim, until nothing is pending or leased (or, with --follow,
// until interrupted).
#include "commands.hpp"
#include "exit_codes.hpp"
#include "api_flags.hpp"
#include "duration_flag.hpp"
#include "engine_flags.hpp"
#include "store_flags.hpp"

#include <dibs/engine.hpp>
#include <dibs/log.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <fstream>

namespace dibs::cli {

command add_enrich_command(CLI::App& app) {
  auto* sub = app.add_subcommand("enrich", "Claim documents, call the API for each, write the answer back under the claim");
  struct flags {
    store_flags store;
    api_flags api;
    engine_flags run;
    std::string shutdown_timeout = "10s";
    bool follow = false;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, true);
  f->api.add_to(*sub, true);
  f->run.add_to(*sub);
  sub->add_option("--shutdown-timeout", f->shutdown_timeout, "how long in-flight calls may finish after SIGINT/SIGTERM")->capture_default_str();
  sub->add_flag("--follow", f->follow, "keep going when nothing is pending: poll with backoff (10 ms up to 5 s)");

  return [f] {
    auto cfg = f->run.config();
    cfg.shutdown_timeout = duration_flag("--shutdown-timeout", f->shutdown_timeout);
    cfg.follow = f->follow;
    if (f->follow) cfg.idle_backoff_max = std::chrono::milliseconds(5'000);
    cfg.validate();

    auto processors = f->api.factory(f->store.source);
    if (auto refused = f->api.check_tls(); !refused.empty())
      throw std::invalid_argument("the API's certificate is refused: " + refused +
                                  " (--ca-file trusts another CA; --insecure skips verification)");

    if (f->store.file_mode() && f->store.out.empty())
      throw std::invalid_argument("--store jsonl:... needs --out OUT.jsonl");
    auto st = f->store.open();
    log::info("enrich: ", st->describe());
    const auto before = st->stats_blocking();
    const std::uint64_t total = before.pending + before.leased_live + before.leased_expired;

    engine e(cfg, st, std::move(processors));
    // With --follow, a change stream (where the server has them) wakes idle shards at once.
    if (f->follow) st->watch([&e] { e.wake(); });
    const auto result = run_engine_in_foreground(e, total, !f->run.no_progress, f->run.metrics_port, f->run.metrics_hosts);
    st->stop_watching();
    // The store may be out of reach right as the run ends (a database restart): everything this
    // process held is already written or released, so the counts are worth a few tries, and
    // without them the run is still reported (and judged by what the engine saw).
    std::optional<store_stats> after;
    std::string unavailable;
    for (int attempt = 0; attempt < 10 && !after; ++attempt) {
      try {
        after = st->stats_blocking();
      } catch (const std::exception& ex) {
        unavailable = ex.what();
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    }
    if (after)
      std::printf("enrich: %s: %llu done, %llu failed, %llu pending, %llu leased; claim conflicts %llu\n",
                  st->describe().c_str(), (unsigned long long)after->done, (unsigned long long)after->failed,
                  (unsigned long long)after->pending, (unsigned long long)(after->leased_live + after->leased_expired),
                  (unsigned long long)st->claim_conflicts());
    else
      std::printf("enrich: %s: the store's counts can't be read now (%s)\n", st->describe().c_str(), unavailable.c_str());
    const bool drained = after ? after->drained() : e.drained();
    if (auto said = st->finish(drained && !result.interrupted); !said.empty())
      std::printf("enrich: %s\n", said.c_str());
    f->run.finish(result);
    // (Everything this process held was released or written before it got here.)
    return run_exit_code({result.stop_signal, f->follow, drained, result.summary.failed});
  };
}

command add_seed_command(CLI::App& app) {
  auto* sub = app.add_subcommand("seed", "Insert N documents {<source>: <random public IPv4>, <target>: null}");
  struct flags {
    store_flags store;
    std::size_t docs = 10'000;
    std::uint64_t seed = 42;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, false);
  sub->add_option("--docs", f->docs, "documents to insert")->capture_default_str();
  sub->add_option("--seed", f->seed, "random seed for the addresses")->capture_default_str();
  return [f] {
    auto st = f->store.open(true, store_flags::table_use::create);
    const auto n = st->seed(f->docs, f->seed);
    std::printf("seed: inserted %zu documents into %s\n", n, st->describe().c_str());
    return n == f->docs ? 0 : 1;
  };
}

command add_status_command(CLI::App& app) {
  auto* sub = app.add_subcommand("status", "Count documents by state: pending, leased (live/expired), done, failed");
  struct flags {
    store_flags store;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, true);
  return [f] {
    auto st = f->store.open(false);
    const auto s = st->stats_blocking();
    std::printf("%s\n", st->describe().c_str());
    std::printf("status: pending=%llu leased_live=%llu leased_expired=%llu done=%llu failed=%llu\n",
                (unsigned long long)s.pending, (unsigned long long)s.leased_live, (unsigned long long)s.leased_expired,
                (unsigned long long)s.done, (unsigned long long)s.failed);
    return 0;
  };
}

}  // namespace dibs::cli
