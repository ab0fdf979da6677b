// dibs bench on a SQL store, as a user runs it: a row with docs/s and statements per document, the
// scratch (on PostgreSQL with its notify function) gone afterwards, also after SIGTERM, and the
// user's tables untouched: named in --store, handed to a worker, or named like a scratch without
// the marker.
#include "support/backend.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>
#include <simdjson.h>

#include <csignal>
#include <cstdio>

using namespace dibs;

namespace {
using test::run_dibs;
using test::db;

// The objects of the database named like dibs bench's scratch.
std::string scratch_objects(test::backend_table& s) {
  std::string names;
  for (const auto& query : db.sql_of().bench_scratch) names += s.query_value(query).value_or("") + "|";
  return names;
}
}  // namespace

BACKEND_TEST_CASE("dibs bench prints docs/s and statements per document, writes JSON, and drops its scratch", "[bench]") {
  auto s = db.open(db.unique_name("benchbase"));
  const auto before = scratch_objects(s);
  const std::string json = "/tmp/dibs_bench_test_" + std::to_string(::getpid()) + ".json";
  for (const std::string processes : {"1", "2"}) {
    std::string out;
    const int rc = run_dibs({"bench", "--store", db.base_uri(), "--docs", "400", "--processes", processes,
                             "--concurrency", "50", "--json", json},
                            out);
    INFO(out);
    REQUIRE(rc == 0);
    CHECK_THAT(out, Catch::Contains("| strategy | docs | docs/s | statements/doc |"));
    CHECK_THAT(out, Catch::Contains("| skip-locked | 400 | "));
    simdjson::dom::parser parser;
    const auto doc = parser.parse(test::slurp(json));
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
    CHECK(double(row["write_p50_ms"]) > 0);
    CHECK(double(row["write_p99_ms"]) > 0);
    CHECK(scratch_objects(s) == before);
  }
  std::remove(json.c_str());
}

BACKEND_TEST_CASE("dibs bench refuses the user's tables with exit 2 and leaves them untouched", "[bench]") {
  auto s = db.open(db.unique_name("benchmine"));
  s.seed(5, 1);
  // Named like a scratch, without the marker: a user's table all the same.
  const std::string lookalike = "dibs_bench_" + std::string("0123456789ab");
  s.execute("CREATE TABLE IF NOT EXISTS " + lookalike + " (id INT PRIMARY KEY)");
  s.execute(db.sql_of().insert_ignore(lookalike, "(1)"));
  std::string out;

  CHECK(run_dibs({"bench", "--store", s.uri(), "--docs", "10"}, out) == 2);
  CHECK_THAT(out, Catch::Contains("dibs bench will not use the table '" + s.name + "'"));
  for (const auto& worker_on : {s.name, lookalike}) {
    CHECK(run_dibs({"bench", "--store", db.base_uri(), "--worker", worker_on}, out) == 2);
    INFO(out);
    CHECK_THAT(out, Catch::Contains("'" + worker_on + "' in database "));
    CHECK_THAT(out, Catch::Contains("is not a scratch table dibs bench made"));
  }
  REQUIRE(run_dibs({"bench", "--store", db.base_uri(), "--clean"}, out) == 0);
  CHECK_THAT(out, !Catch::Contains(lookalike));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + s.name + " WHERE location IS NULL") == std::optional<std::string>("5"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + lookalike) == std::optional<std::string>("1"));
  CHECK(s.query_value(db.sql_of().comment_of(s.name)).value_or("") == "");  // not marked
  s.execute("DROP TABLE " + lookalike);
}

BACKEND_TEST_CASE("dibs bench drops its scratch on SIGTERM, and --clean drops a marked leftover", "[bench]") {
  auto s = db.open(db.unique_name("benchsig"));
  const auto before = scratch_objects(s);
  // Slow enough (a second per item, 5 in flight) to be running when the signal comes.
  test::child_process p({dibs::test::dibs_binary(), "bench", "--store", db.base_uri(), "--docs", "100", "--latency", "1s",
                         "--concurrency", "5", "--processes", "2"},
                        /*merge_stderr=*/true);
  REQUIRE(test::eventually([&] { return scratch_objects(s) != before; }));
  p.signal(SIGTERM);
  std::string out;
  CHECK(p.finish(out) == 143);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("signal 15: stopped; the scratch is dropped"));
  CHECK(scratch_objects(s) == before);

  // What a kill -9 leaves: a marked dibs_bench_ table. --clean drops it.
  const std::string leftover = "dibs_bench_" + std::string("00000000beef");
  auto left = db.open(leftover);
  left.execute(db.sql_of().set_comment(leftover, "dibs bench scratch"));
  REQUIRE(run_dibs({"bench", "--store", db.base_uri(), "--clean"}, out) == 0);
  CHECK_THAT(out, Catch::Contains("bench: dropped " + leftover));
  CHECK(scratch_objects(s) == before);
}
