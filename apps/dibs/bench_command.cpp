// `dibs bench`: what a user's own store does with dibs. For each claim strategy: a fresh scratch
// table (MongoDB: collection) of its own (bench_scratch.hpp), seeded, drained by K processes
// (bench_drain.hpp, bench_workers.hpp), measured (bench_figures.hpp), then dropped -- at the
// end, on SIGINT/SIGTERM and on an error. Only a kill -9 leaves one behind; `--clean` drops those.
#include "bench_drain.hpp"
#include "bench_figures.hpp"
#include "bench_scratch.hpp"
#include "bench_workers.hpp"
#include "commands.hpp"
#include "duration_flag.hpp"
#include "exit_codes.hpp"
#include "signal_watch.hpp"
#include "store_flags.hpp"

#include <dibs/engine_config.hpp>
#include <dibs/log.hpp>
#include "engine/src/uri_redact.hpp"

#include <CLI/CLI.hpp>

#include <sys/prctl.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs::cli {

namespace {

struct bench_flags {
  store_flags store;
  std::size_t docs = 5'000;
  std::string strategies = "all";
  std::size_t processes = 1;
  std::string latency = "none";
  std::size_t concurrency = 200;
  std::size_t claim_batch = 100;
  std::string json;
  bool clean = false;
  std::string worker;  // hidden: this process is a worker on that scratch
};

// The flags a worker is started with: the parent's store and drain settings, one strategy.
std::vector<std::string> worker_args(const bench_flags& f, const std::string& name, const std::string& strategy) {
  std::vector<std::string> a{"bench", "--worker", name, "--store", f.store.store, "--strategies", strategy,
                             "--latency", f.latency, "--concurrency", std::to_string(f.concurrency),
                             "--claim-batch", std::to_string(f.claim_batch), "--db-threads",
                             std::to_string(f.store.threads())};
  if (!f.store.password_file.empty()) a.insert(a.end(), {"--password-file", f.store.password_file});
  if (!f.store.db.empty()) a.insert(a.end(), {"--db", f.store.db});
  return a;
}

// Sums one process's figures into a strategy's.
void add_report(strategy_figures& into, latency_record& claims, latency_record& writes, const worker_report& r) {
  into.docs += r.docs;
  into.failed += r.failed;
  if (r.counts_statements) into.statements = into.statements.value_or(0) + r.statements;
  into.conflicts += r.conflicts;
  latency_record::parse_into(r.claim, claims);
  latency_record::parse_into(r.write, writes);
}

// A worker: drain the parent's scratch once the parent says go; figures on stdout.
int run_worker(const bench_flags& f, const drain_settings& d, bench_scratch& scratch, const std::string& strategy,
               signal_watch& signals) {
  // A parent killed with -9 takes its workers with it (SIGTERM: they stop and release).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  auto st = scratch.open(f.worker, strategy);
  std::printf("bench-worker: ready\n");
  std::fflush(stdout);
  std::string said;
  if (!std::getline(std::cin, said) || said != "go" || signals.caught()) return exit_code::cut_short;
  const auto r = drain_here(st, d, signals);
  std::printf("%s\n", worker_line(r).c_str());
  std::fflush(stdout);
  if (const int sig = signals.caught()) return 128 + sig;
  return r.failed ? exit_code::items_failed : exit_code::ok;
}

// One strategy on its own scratch, by `f.processes` processes; the scratch is dropped after.
strategy_figures bench_strategy(const bench_flags& f, const drain_settings& d, bench_scratch& scratch,
                                const std::string& strategy, signal_watch& signals) {
  const auto name = scratch_name();
  // Dropped however this ends (an error, a signal); a kill -9 leaves it (--clean).
  struct dropper {
    bench_scratch& s;
    const std::string& name;
    ~dropper() {
      try {
        s.drop(name);
      } catch (const std::exception& e) {
        log::error("bench: could not drop the scratch ", name, " (", e.what(), "); dibs bench --clean drops it");
      }
    }
  } drop_after{scratch, name};
  log::info("bench: ", strategy, ": scratch ", name, " in ", scratch.where());
  auto st = scratch.create(name, f.docs, strategy);

  strategy_figures row;
  row.strategy = strategy;
  if (signals.caught()) return row;  // came while seeding: the caller stops

  std::vector<std::unique_ptr<worker_process>> workers;
  const auto pass_on = [&workers](int sig) {
    for (auto& w : workers) w->signal(sig);
  };
  // Unhooked before `workers` goes (a return, a throw): then each is stopped and reaped, and only
  // after that is the scratch dropped.
  struct unhook {
    signal_watch& s;
    ~unhook() { s.on_signal({}); }
  } unhook_workers{signals};
  for (std::size_t k = 1; k < f.processes; ++k)
    workers.push_back(std::make_unique<worker_process>(worker_args(f, name, strategy)));
  signals.on_signal(pass_on);
  for (auto& w : workers)
    if (const auto line = w->read_line(); line != "bench-worker: ready") {
      if (signals.caught()) return row;  // the workers are stopped and reaped as `workers` goes
      throw std::runtime_error("a worker process did not start (exit status " + std::to_string(w->wait()) + ")");
    }

  latency_record claims, writes;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& w : workers) w->go();
  add_report(row, claims, writes, drain_here(st, d, signals, pass_on));
  signals.on_signal(pass_on);
  for (auto& w : workers) {
    const auto line = w->read_line();
    const auto status = w->wait();
    const auto report = parse_worker_line(line);
    if (!report) {
      if (signals.caught()) continue;
      throw std::runtime_error("a worker process ended without its figures (exit status " + std::to_string(status) + ")");
    }
    add_report(row, claims, writes, *report);
  }
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  row.claim_p50 = claims.quantile(0.5);
  row.claim_p99 = claims.quantile(0.99);
  row.write_p50 = writes.quantile(0.5);
  row.write_p99 = writes.quantile(0.99);
  return row;
}

int run_bench(const bench_flags& f, const CLI::App& sub) {
  // A worker that died must not take its parent with it (a write to its stdin).
  std::signal(SIGPIPE, SIG_IGN);
  if (const auto named = named_table(f.store.store); !named.empty() || sub.count("--collection"))
    throw std::invalid_argument("dibs bench will not use " +
                                (named.empty() ? "--collection '" + f.store.collection + "'"
                                               : "the table '" + named + "' that --store names") +
                                ": it works only on scratch tables of its own (dibs_bench_<random>, made, marked and "
                                "dropped by it); leave it out");
  drain_settings d;
  d.concurrency = f.concurrency;
  d.claim_batch = f.claim_batch;
  if (f.latency != "none") d.latency = duration_flag("--latency", f.latency);
  auto scratch = make_bench_scratch(f.store);
  if (f.clean) {
    const auto left = scratch->leftovers();
    for (const auto& name : left)
      if (scratch->drop(name)) std::printf("bench: dropped %s from %s\n", name.c_str(), scratch->where().c_str());
    if (left.empty()) std::printf("bench: no dibs bench scratch left in %s\n", scratch->where().c_str());
    return exit_code::ok;
  }
  const auto strategies = bench_strategies(scratch->kind(), f.strategies);
  // From here on a signal is the command's to handle: the scratch must be dropped first.
  signal_watch signals;
  if (!f.worker.empty()) return run_worker(f, d, *scratch, strategies.front(), signals);

  const std::string shown = redact_uri(f.store.store);
  std::printf("bench: %s, %zu documents per strategy, %zu process(es), concurrency %zu, latency %s\n", shown.c_str(),
              f.docs, f.processes, f.concurrency, f.latency.c_str());
  std::printf("%s\n", figures_header(scratch->kind()).c_str());
  std::fflush(stdout);
  std::vector<strategy_figures> rows;
  for (const auto& strategy : strategies) {
    if (signals.caught()) break;
    rows.push_back(bench_strategy(f, d, *scratch, strategy, signals));
    if (signals.caught()) break;  // a row cut short is not shown
    std::printf("%s\n", figures_row(rows.back()).c_str());
    std::fflush(stdout);
  }
  if (const int sig = signals.caught()) {
    std::fprintf(stderr, "bench: signal %d: stopped; the scratch is dropped\n", sig);
    return 128 + sig;
  }
  if (!f.json.empty()) {
    std::ofstream out(f.json);
    out << figures_json(shown, f.docs, f.processes, f.latency, rows) << "\n";
    if (!out) throw std::invalid_argument("--json: cannot write '" + f.json + "'");
  }
  for (const auto& r : rows)
    if (r.failed) return exit_code::items_failed;
  return exit_code::ok;
}

}  // namespace

command add_bench_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "bench", "Measure a store: drain a scratch table with each claim strategy, print docs/s, statements per document, "
               "claim conflicts and latencies, then drop it");
  auto f = std::make_shared<bench_flags>();
  sub->add_option("--store", f->store.store,
                  "the store to measure: mongodb://HOST[:PORT]/DB, mysql://USER@HOST:PORT/DB or "
                  "postgresql://USER@HOST:PORT/DB (no table or collection: dibs bench makes its own)")
      ->type_name("URI")
      ->required();
  sub->add_option("--password-file", f->store.password_file,
                  "the database password: the first line of this file (else DIBS_STORE_PASSWORD; mysql:// also "
                  "MYSQL_PWD; postgresql:// also PGPASSWORD and ~/.pgpass)")
      ->type_name("FILE");
  sub->add_option("--db", f->store.db, "MongoDB: database, overriding the URI's path (default: the path, else test)")
      ->type_name("NAME");
  sub->add_option("--collection", f->store.collection, "refused: dibs bench uses only a scratch collection of its own")
      ->type_name("NAME");
  add_db_threads_flag(*sub, f->store.db_threads);
  sub->add_option("--docs", f->docs, "documents seeded and drained per strategy")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}))
      ->capture_default_str();
  sub->add_option("--strategies", f->strategies,
                  "claim strategies, comma-separated: MongoDB batch, lock-collection, update-find, find-and-modify; "
                  "MySQL and PostgreSQL skip-locked; or all")
      ->type_name("LIST")
      ->capture_default_str();
  sub->add_option("--processes", f->processes, "processes draining at once (this one and K-1 workers it starts)")
      ->type_name("K")
      ->check(CLI::Range(std::size_t{1}, std::size_t{64}))
      ->capture_default_str();
  sub->add_option("--latency", f->latency,
                  "none: no HTTP (the store alone); or a DURATION: each item through the in-process ip-api stub "
                  "answering after that long")
      ->type_name("DURATION|none")
      ->capture_default_str();
  sub->add_option("--concurrency", f->concurrency, "items in flight per process")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  sub->add_option("--claim-batch", f->claim_batch, "items per claim")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000}))
      ->capture_default_str();
  sub->add_option("--json", f->json, "also write the figures to this file as JSON")->type_name("FILE");
  sub->add_flag("--clean", f->clean,
                "drop the scratch tables a killed dibs bench left (named dibs_bench_* AND marked), and nothing else");
  sub->add_option("--worker", f->worker, "")->group("");  // a worker process on this scratch (bench_workers.hpp)
  sub->footer(
      "Examples:\n"
      "  dibs bench --store 'mongodb://db1:27017/scratchdb' --docs 20000 --processes 4\n"
      "  DIBS_STORE_PASSWORD=... dibs bench --store 'mysql://app@db:3306/geo' --latency 20ms --json bench.json\n"
      "  dibs bench --store 'postgresql://app@db:5432/geo' --clean\n"
      "Each strategy gets a fresh scratch table dibs_bench_<random>, marked as dibs bench's (MySQL, PostgreSQL: a\n"
      "table comment; MongoDB: a marker document), dropped at the end, on SIGINT/SIGTERM and on an error. After a\n"
      "kill -9, --clean drops what is left. Exit codes: 0, 1 items failed, 2 usage or refused, 130/143 signals.");
  return [f, sub] {
    // The store's connections by default follow the drain's shards, as in dibs enrich.
    engine_config drain;
    drain.concurrency = f->concurrency;
    drain.claim_batch = f->claim_batch;
    f->store.shards = drain.effective_shards();
    return run_bench(*f, *sub);
  };
}

}  // namespace dibs::cli
