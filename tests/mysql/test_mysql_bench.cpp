// dibs bench on MariaDB, as a user runs it: a table per strategy with docs/s and statements per
// document, the scratch gone afterwards (also after SIGTERM), and the user's tables untouched:
// named in --store, handed to a worker, or named like a scratch without the marker.
#include "support/eventually.hpp"
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>
#include <simdjson.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace dibs;

namespace {
using test::run_dibs;
std::string scratch_tables(sql::mysql_store& s) {
  return s.query_value("SELECT COALESCE(GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME), '') FROM information_schema.TABLES "
                       "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'dibs\\_bench\\_%'")
      .value_or("");
}
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("dibs bench on MariaDB prints docs/s and statements per document, writes JSON, and drops its scratch",
          "[mysql][bench]") {
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("benchbase"));
  sql::mysql_store s(o);
  const auto before = scratch_tables(s);
  const std::string json = "/tmp/dibs_bench_test_" + std::to_string(::getpid()) + ".json";
  for (const std::string processes : {"1", "2"}) {
    std::string out;
    const int rc = run_dibs({"bench", "--store", test::mysql_base_uri(), "--docs", "400", "--processes", processes,
                             "--concurrency", "50", "--json", json},
                            out);
    INFO(out);
    REQUIRE(rc == 0);
    CHECK_THAT(out, Catch::Contains("| strategy | docs | docs/s | statements/doc |"));
    CHECK_THAT(out, Catch::Contains("| skip-locked | 400 | "));
    simdjson::dom::parser parser;
    const auto doc = parser.parse(read_file(json));
    CHECK(int64_t(doc["docs"]) == 400);
    CHECK(int64_t(doc["processes"]) == std::stoi(processes));
    const auto rows = simdjson::dom::array(doc["strategies"]);
    REQUIRE(rows.size() == 1);
    const auto row = *rows.begin();
    CHECK(std::string_view(row["strategy"]) == "skip-locked");
    CHECK(int64_t(row["docs"]) == 400);
    CHECK(double(row["docs_per_s"]) > 0);
    // A claim of 100 rows and its writes are a handful of statements: more than none, far
    // fewer than one per row each.
    CHECK(double(row["statements_per_doc"]) > 0);
    CHECK(double(row["statements_per_doc"]) < 2);
    CHECK(double(row["claim_p50_ms"]) > 0);
    CHECK(double(row["write_p99_ms"]) > 0);
    CHECK(scratch_tables(s) == before);
  }
  std::remove(json.c_str());
}

TEST_CASE("dibs bench on MariaDB refuses the user's tables with exit 2 and leaves them untouched", "[mysql][bench]") {
  sql::mysql_options o;
  const auto table = test::unique_table("benchmine");
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);
  s.seed(5, 1);
  // Named like a scratch, without the marker: a user's table all the same.
  const std::string lookalike = "dibs_bench_" + std::string("0123456789ab");
  s.execute("CREATE TABLE IF NOT EXISTS " + lookalike + " (id INT PRIMARY KEY)");
  s.execute("INSERT IGNORE INTO " + lookalike + " VALUES (1)");
  std::string out;

  CHECK(run_dibs({"bench", "--store", test::mysql_uri_for(table), "--docs", "10"}, out) == 2);
  CHECK_THAT(out, Catch::Contains("dibs bench will not use the table '" + table + "'"));
  for (const auto& worker_on : {table, lookalike}) {
    CHECK(run_dibs({"bench", "--store", test::mysql_base_uri(), "--worker", worker_on}, out) == 2);
    INFO(out);
    CHECK_THAT(out, Catch::Contains("'" + worker_on + "' in database "));
    CHECK_THAT(out, Catch::Contains("is not a scratch table dibs bench made"));
  }
  REQUIRE(run_dibs({"bench", "--store", test::mysql_base_uri(), "--clean"}, out) == 0);
  CHECK_THAT(out, !Catch::Contains(lookalike));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NULL") == std::optional<std::string>("5"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + lookalike) == std::optional<std::string>("1"));
  CHECK(s.query_value("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" +
                      table + "'") == std::optional<std::string>(""));
  s.execute("DROP TABLE " + lookalike);
}

TEST_CASE("dibs bench on MariaDB drops its scratch on SIGTERM, and --clean drops a marked leftover", "[mysql][bench]") {
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("benchsig"));
  sql::mysql_store s(o);
  const auto before = scratch_tables(s);
  // Slow enough (a second per item, 5 in flight) to be running when the signal comes.
  test::child_process p({dibs::test::dibs_binary(), "bench", "--store", test::mysql_base_uri(), "--docs", "100", "--latency", "1s",
                         "--concurrency", "5", "--processes", "2"},
                        /*merge_stderr=*/true);
  REQUIRE(test::eventually([&] { return scratch_tables(s) != before; }));
  p.signal(SIGTERM);
  std::string out;
  CHECK(p.finish(out) == 143);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("signal 15: stopped; the scratch is dropped"));
  CHECK(scratch_tables(s) == before);

  // What a kill -9 leaves: a marked dibs_bench_ table. --clean drops it.
  const std::string leftover = "dibs_bench_" + std::string("00000000beef");
  sql::mysql_options l;
  l.uri = test::mysql_uri_for(leftover);
  sql::mysql_store left(l);
  left.execute("ALTER TABLE " + leftover + " COMMENT = 'dibs bench scratch'");
  REQUIRE(run_dibs({"bench", "--store", test::mysql_base_uri(), "--clean"}, out) == 0);
  CHECK_THAT(out, Catch::Contains("bench: dropped " + leftover));
  CHECK(scratch_tables(s) == before);
}
