// The drain rate of a MariaDB job table: dibs (SKIP LOCKED batch claims, --on-done delete)
// against the classic Python recipe (bench/mysql_reference.py: 10 processes, batches of 100),
// on the same server and the same freshly seeded rows, measured in one run, with a no-op
// processor and with the stub API. Prints rows/s, CPU seconds and the ratio dibs / Python; then
// dibs's no-op drain again, its claims reading three more columns of each row (a VARCHAR, an INT,
// a JSON object: what a request body of three columns makes the claim return), beside the
// one-column drain, alternated twice, the better of each pair kept.
//
//   dibs_bench_mysql --uri mysql://root@127.0.0.1:PORT/dibs_bench --python bench/mysql_reference.py
#include "noop_processor.hpp"

#include <dibs/http/http_processor.hpp>
#include <dibs/stores/mysql_store.hpp>
#include <adapters/mysql/mysql_uri.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <sstream>

using namespace dibs;

namespace {
using bench::noop_processor;

double cpu_seconds(int who) {
  rusage u{};
  ::getrusage(who, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct figures {
  double rows = 0, seconds = 0, cpu = 0;
  double rate() const { return seconds > 0 ? rows / seconds : 0; }
};

// The table as dibs bench seeds it (narrow), with three more columns (wide), and with the claims
// reading them (wide_read).
enum class shape { narrow, wide, wide_read };

figures run_dibs(const std::string& uri, std::size_t rows, const processor_factory& factory, std::size_t concurrency,
                 shape table_shape = shape::narrow) {
  mysql::mysql_options o;
  o.uri = uri;
  o.done = mysql::on_done::remove;
  o.threads = 4;
  auto st = std::make_shared<mysql::mysql_store>(o);
  st->reset_table();
  st->seed(rows, 1);
  if (table_shape != shape::narrow) {
    const auto table = mysql::parse_mysql_uri(uri).table;
    st->execute("ALTER TABLE `" + table + "` ADD COLUMN title VARCHAR(80), ADD COLUMN pages INT, ADD COLUMN meta JSON");
    st->execute("UPDATE `" + table + "` SET title = CONCAT('Caf\xC3\xA9 \"', id, '\"'), pages = id % 500, "
                "meta = JSON_OBJECT('n', id, 'tags', JSON_ARRAY('a', 'b'))");
    // Rebuilt: the rows grown in place by the UPDATE are packed again, as a table loaded so would be.
    st->execute("OPTIMIZE TABLE `" + table + "`");
    if (table_shape == shape::wide_read) o.more_columns = {"title", "pages", "meta"};
    st = std::make_shared<mysql::mysql_store>(o);
  }
  engine_config cfg;
  cfg.shards = 2;
  cfg.concurrency = concurrency;
  cfg.claim_batch = 100;
  const double cpu0 = cpu_seconds(RUSAGE_SELF);
  engine e(cfg, st, factory);
  e.start();
  e.wait();
  const auto s = e.summary();
  return {double(s.completed), s.elapsed_s, cpu_seconds(RUSAGE_SELF) - cpu0};
}

figures run_python(const std::string& python, const std::string& uri, std::size_t rows, const std::string& url) {
  mysql::mysql_options o;
  o.uri = uri;
  auto st = std::make_shared<mysql::mysql_store>(o);
  st->reset_table();
  st->seed(rows, 1);
  auto u = mysql::parse_mysql_uri(uri);
  std::string cmd = "/usr/bin/python3 " + python + " --host " + u.host + " --port " + std::to_string(u.port) +
                    " --user " + u.user + " --db " + u.database + " --table " + u.table;
  if (!u.password.empty()) cmd += " --password '" + u.password + "'";
  if (!url.empty()) cmd += " --url " + url;
  FILE* p = ::popen(cmd.c_str(), "r");
  char line[512] = {};
  figures f;
  while (p && std::fgets(line, sizeof line, p)) {
    double r, s, rate, cpu;
    if (std::sscanf(line, "rows=%lf seconds=%lf rows_per_s=%lf cpu_s=%lf", &r, &s, &rate, &cpu) == 4) f = {r, s, cpu};
  }
  if (p) ::pclose(p);
  return f;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MariaDB drain rate: dibs against the classic Python SKIP LOCKED consumer"};
  std::string uri, python = "bench/mysql_reference.py";
  std::size_t rows = 100'000;
  std::string json_path;
  app.add_option("--json", json_path, "also write the figures to this JSON file");
  app.add_option("--uri", uri, "mysql://user@host:port/db (the table is the bench's own)")->required();
  app.add_option("--python", python, "the reference consumer")->capture_default_str();
  app.add_option("--rows", rows)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string table_uri = uri + (uri.find('?') == std::string::npos ? "?table=drain" : "&table=drain");

  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto noop = [](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<noop_processor>(); };
  http::processor_options popts;
  popts.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  auto http_factory = http::make_http_processor_factory(popts);

  std::printf("| processing | dibs rows/s | Python rows/s | ratio | dibs CPU µs/row | Python CPU µs/row |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::string json = "{\"rows\":" + std::to_string(rows) + ",\"runs\":[";
  for (const bool with_api : {false, true}) {
    const auto d = run_dibs(table_uri, rows, with_api ? http_factory : noop, 1000);
    const auto p = run_python(python, table_uri, rows, with_api ? api.base_url() + "/json/" : "");
    std::printf("| %s | %.0f | %.0f | %.2f | %.1f | %.1f |\n", with_api ? "GET the stub (0 ms)" : "none (no-op)", d.rate(),
                p.rate(), p.rate() > 0 ? d.rate() / p.rate() : 0.0, d.rows > 0 ? d.cpu / d.rows * 1e6 : 0.0,
                p.rows > 0 ? p.cpu / p.rows * 1e6 : 0.0);
    std::fflush(stdout);
    char entry[400];
    std::snprintf(entry, sizeof entry,
                  "%s{\"processing\":\"%s\",\"dibs_rows_per_s\":%.1f,\"python_rows_per_s\":%.1f,"
                  "\"dibs_cpu_us_per_row\":%.2f,\"python_cpu_us_per_row\":%.2f}",
                  with_api ? "," : "", with_api ? "get_stub" : "noop", d.rate(), p.rate(),
                  d.rows > 0 ? d.cpu / d.rows * 1e6 : 0.0, p.rows > 0 ? p.cpu / p.rows * 1e6 : 0.0);
    json += entry;
    if (d.rows != double(rows) || p.rows != double(rows))
      std::fprintf(stderr, "warning: drained %.0f (dibs) and %.0f (Python) of %zu rows\n", d.rows, p.rows, rows);
  }
  // The claim's cost with three more columns read: no-op drains, alternated.
  figures one, wide, three;
  for (int round = 0; round < 2; ++round) {
    const auto a = run_dibs(table_uri, rows, noop, 1000, shape::narrow);
    const auto b = run_dibs(table_uri, rows, noop, 1000, shape::wide);
    const auto c = run_dibs(table_uri, rows, noop, 1000, shape::wide_read);
    if (a.rate() > one.rate()) one = a;
    if (b.rate() > wide.rate()) wide = b;
    if (c.rate() > three.rate()) three = c;
  }
  const auto per_row = [](const figures& f) { return f.rows > 0 ? f.cpu / f.rows * 1e6 : 0.0; };
  std::printf("\n| dibs no-op drain | rows/s (better of 2) | CPU µs/row |\n|---|---|---|\n");
  std::printf("| the seeded table, the key column read | %.0f | %.1f |\n", one.rate(), per_row(one));
  std::printf("| three more columns (VARCHAR, INT, JSON), not read | %.0f | %.1f |\n", wide.rate(), per_row(wide));
  std::printf("| the three read (a request body of three columns) | %.0f | %.1f |\n", three.rate(), per_row(three));
  std::printf("| read / seeded table | %.2f | |\n", one.rate() > 0 ? three.rate() / one.rate() : 0.0);
  std::printf("| read / not read, same table | %.2f | |\n", wide.rate() > 0 ? three.rate() / wide.rate() : 0.0);
  {
    char entry[300];
    std::snprintf(entry, sizeof entry,
                  "],\"columns\":{\"one_rows_per_s\":%.1f,\"wide_rows_per_s\":%.1f,\"three_rows_per_s\":%.1f,"
                  "\"ratio\":%.3f,\"ratio_same_table\":%.3f",
                  one.rate(), wide.rate(), three.rate(), one.rate() > 0 ? three.rate() / one.rate() : 0.0,
                  wide.rate() > 0 ? three.rate() / wide.rate() : 0.0);
    json += entry;
    json += "}";
  }
  if (!json_path.empty()) {
    std::FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::fprintf(f, "%s}\n", json.c_str());
    std::fclose(f);
  }
  return 0;
}
