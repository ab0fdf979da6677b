// The PostgreSQL store on the shards' own event loops (libpq's non-blocking API, one connection
// per shard) against the same store run through the offload pool (blocking_store: each call
// hops to a pool thread, which runs the same statements on its own connection, and back), on
// the same server and freshly seeded rows, --on-done delete, a no-op processor: rows/s and CPU
// µs per row of this process (the server's CPU is not counted). Runs alternate, `--rounds` each.
//
//   dibs_bench_pg_offload --uri postgresql://postgres@127.0.0.1:PORT/dibs_test [--rows 50000]
#include "noop_processor.hpp"

#include <adapters/postgres/pg_store.hpp>

#include <dibs/blocking_store.hpp>
#include <dibs/engine.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <cstdio>

using namespace dibs;

namespace {
using bench::noop_processor;

// Each pool thread's own loop, kept for the thread's life: its connection to the store lasts too.
net::io_context& thread_loop() {
  thread_local net::io_context ioc(1);
  return ioc;
}

template <class T>
T run_here(awaitable<T> a) {
  auto& ioc = thread_loop();
  auto fut = net::co_spawn(ioc, std::move(a), net::use_future);
  ioc.restart();
  ioc.run();
  return fut.get();
}

// The same pg_store, called the way the blocking drivers are: on the offload pool.
class offloaded_store final : public blocking_store {
 public:
  offloaded_store(std::shared_ptr<pg::pg_store> inner, std::size_t threads) : blocking_store(threads), inner_(std::move(inner)) {}
  ~offloaded_store() override { join_pool(); }
  std::string describe() const override { return inner_->describe() + " through the offload pool"; }
  std::size_t seed(std::size_t n, std::uint64_t s) override { return inner_->seed(n, s); }
  store_stats stats_blocking() override { return inner_->stats_blocking(); }
  std::vector<job> claim_blocking(const claim_request& r) override { return run_here(inner_->claim(r)); }
  write_result complete_blocking(const std::vector<completion>& b) override { return run_here(inner_->complete(b)); }
  renew_result renew_blocking(const std::vector<renewal>& b, millis lease) override {
    return run_here(inner_->renew(b, lease));
  }
  write_result release_blocking(const std::vector<release_item>& b) override { return run_here(inner_->release(b)); }
  write_result fail_blocking(const std::vector<failure>& b) override { return run_here(inner_->fail(b)); }

 private:
  std::shared_ptr<pg::pg_store> inner_;
};

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct figures {
  double rows = 0, seconds = 0, cpu = 0;
};

figures drain(const std::string& uri, std::size_t rows, bool offloaded, std::size_t threads) {
  pg::pg_options o;
  o.uri = uri;
  o.done = pg::on_done::remove;
  auto pg_store = std::make_shared<pg::pg_store>(o);
  pg_store->reset_table();
  pg_store->seed(rows, 1);
  std::shared_ptr<store> st = pg_store;
  if (offloaded) st = std::make_shared<offloaded_store>(pg_store, threads);
  engine_config cfg;
  cfg.shards = 2;
  cfg.concurrency = 1000;
  cfg.claim_batch = 100;
  const double cpu0 = cpu_seconds();
  figures f;
  {
    engine e(cfg, st, [](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<noop_processor>(); });
    e.start();
    e.wait();
    const auto s = e.summary();
    f = {double(s.completed), s.elapsed_s, 0};
  }
  f.cpu = cpu_seconds() - cpu0;
  return f;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"PostgreSQL store: non-blocking on the shards' loops against the offload pool"};
  std::string uri;
  std::size_t rows = 50'000, rounds = 2, threads = 4;
  app.add_option("--uri", uri, "postgresql://user@host:port/db (the table is the bench's own)")->required();
  app.add_option("--rows", rows)->capture_default_str();
  app.add_option("--rounds", rounds)->capture_default_str();
  app.add_option("--threads", threads, "offload pool threads")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string table_uri = uri + (uri.find('?') == std::string::npos ? "?table=pg_offload" : "&table=pg_offload");
  std::printf("| round | mode | rows | rows/s | CPU µs/row (dibs process) |\n|---|---|---|---|---|\n");
  for (std::size_t r = 1; r <= rounds; ++r)
    for (const bool offloaded : {false, true}) {
      const auto f = drain(table_uri, rows, offloaded, threads);
      std::printf("| %zu | %s | %.0f | %.0f | %.1f |\n", r, offloaded ? "offload pool" : "shard loop (non-blocking)", f.rows,
                  f.seconds > 0 ? f.rows / f.seconds : 0.0, f.rows > 0 ? f.cpu / f.rows * 1e6 : 0.0);
      std::fflush(stdout);
    }
  return 0;
}
