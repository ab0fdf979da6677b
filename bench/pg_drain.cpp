// dibs's side of the PostgreSQL queue comparison (bench/pg_peers.py, `make bench` part pg): seed
// a job table, or drain it with a no-op processor or with GETs of an external stub, and print one
// JSON line with the jobs done, the seconds, jobs/s and the CPU seconds of this process over the
// drain. Seeding and draining are separate runs so that the harness can read the server's CPU
// around the drain alone, as it does for Graphile Worker and pg-boss.
//
//   dibs_bench_pg_drain --uri postgresql://postgres@127.0.0.1:PORT/db --seed 100000
//   dibs_bench_pg_drain --uri ... [--url http://127.0.0.1:PORT/json/] [--shards 2 --concurrency 1000]
//
// --columns (with --seed): the table gets three more columns (a VARCHAR, an INT, a jsonb object);
// --read-columns (with the drain): the claims return them, as a request body of three columns
// makes them (bench/pg_columns.py compares the three).
#include "noop_processor.hpp"

#include <dibs/http/http_processor.hpp>
#include <adapters/postgres/pg_protocol.hpp>
#include <adapters/postgres/pg_store.hpp>

#include <dibs/engine.hpp>

#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <cstdio>

using namespace dibs;

namespace {
using bench::noop_processor;

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

pg::pg_options store_options(const std::string& uri) {
  pg::pg_options o;
  o.uri = uri;
  // The peers keep no answer either: Graphile Worker deletes a done job, pg-boss marks it.
  o.done = pg::on_done::remove;
  return o;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dibs's side of the PostgreSQL queue comparison: seed, or drain and print one JSON line"};
  std::string uri, url;
  std::size_t seed = 0;
  bool columns = false, read_columns = false;
  engine_config cfg;
  cfg.shards = 2;
  cfg.concurrency = 1000;
  cfg.claim_batch = 100;
  app.add_option("--uri", uri, "postgresql://user@host:port/db?table=... (the bench's own table)")->required();
  app.add_option("--seed", seed, "drop and recreate the table with this many jobs, then exit");
  app.add_option("--url", url, "GET this prefix + the job's address (empty: a no-op processor)");
  app.add_option("--shards", cfg.shards)->capture_default_str();
  app.add_option("--concurrency", cfg.concurrency)->capture_default_str();
  app.add_option("--claim-batch", cfg.claim_batch)->capture_default_str();
  app.add_flag("--columns", columns, "seed three more columns (title, pages, meta)");
  app.add_flag("--read-columns", read_columns, "the drain's claims read title, pages and meta (a body of three columns)");
  CLI11_PARSE(app, argc, argv);

  auto opts = store_options(uri);
  if (read_columns && seed == 0) opts.more_columns = {"title", "pages", "meta"};
  auto st = std::make_shared<pg::pg_store>(opts);
  if (seed > 0) {
    st->reset_table();
    st->seed(seed, 1);
    if (columns) {
      const auto table = pg::parse_pg_uri(uri).table;
      st->execute("ALTER TABLE \"" + table + "\" ADD COLUMN title VARCHAR(80), ADD COLUMN pages INT, ADD COLUMN meta jsonb");
      st->execute("UPDATE \"" + table + "\" SET title = 'Caf\xC3\xA9 \"' || id || '\"', pages = id % 500, "
                  "meta = jsonb_build_object('n', id, 'tags', jsonb_build_array('a', 'b'))");
    }
    // The UPDATE left a dead version of every row: gone before the drain, as on a table in use.
    st->execute("VACUUM (ANALYZE) \"" + pg::parse_pg_uri(uri).table + "\"");
    std::printf("{\"seeded\":%zu}\n", seed);
    return 0;
  }

  processor_factory factory = [](const shard_info&) -> std::unique_ptr<processor> {
    return std::make_unique<noop_processor>();
  };
  if (!url.empty()) {
    http::processor_options popts;
    popts.url = http::url_template::parse(url + "{originatingIp}");
    factory = http::make_http_processor_factory(popts);
  }
  const double cpu0 = cpu_seconds();
  engine e(cfg, st, factory);
  e.start();
  e.wait();
  const auto s = e.summary();
  const double cpu = cpu_seconds() - cpu0;
  std::printf("{\"side\":\"dibs\",\"jobs\":%llu,\"failed\":%llu,\"seconds\":%.4f,\"jobs_per_s\":%.1f,\"cpu_s\":%.4f,"
              "\"settings\":\"%zu shards, concurrency %zu, claim batch %zu, --on-done delete\"}\n",
              (unsigned long long)s.completed, (unsigned long long)s.failed, s.elapsed_s, s.docs_per_s(), cpu,
              cfg.effective_shards(), cfg.concurrency, cfg.claim_batch);
  return s.failed == 0 ? 0 : 1;
}
