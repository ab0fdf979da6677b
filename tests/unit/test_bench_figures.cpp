// dibs bench's figures without a store: the latency record's quantiles and its text, the table
// row, the JSON, the worker's line, --strategies and the scratch names.
#include "apps/dibs/bench_figures.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dibs;
using namespace dibs::cli;

TEST_CASE("a latency record's quantiles are within a bucket of the truth", "[bench]") {
  latency_record r;
  CHECK(r.count() == 0);
  CHECK(r.quantile(0.5) == 0);
  for (int i = 1; i <= 100; ++i) r.record(i * 1e-3);  // 1 ms .. 100 ms
  CHECK(r.count() == 100);
  CHECK(r.quantile(0.5) >= 50e-3);
  CHECK(r.quantile(0.5) <= 50e-3 * 1.05);
  CHECK(r.quantile(0.99) >= 99e-3);
  CHECK(r.quantile(0.99) <= 99e-3 * 1.05);
  CHECK(r.quantile(1.0) >= 100e-3);
  // Out of range at both ends: kept in the first and the last bucket, never lost.
  latency_record edges;
  edges.record(0);
  edges.record(1e9);
  CHECK(edges.count() == 2);
  CHECK(edges.quantile(0.5) == latency_record::upper_bound(0));
  CHECK(edges.quantile(1.0) == latency_record::upper_bound(latency_record::buckets - 1));
}

TEST_CASE("a latency record travels as text and merges by adding counts", "[bench]") {
  latency_record a, b;
  for (int i = 0; i < 90; ++i) a.record(1e-3);
  for (int i = 0; i < 10; ++i) b.record(1.0);
  latency_record merged;
  latency_record::parse_into(a.text(), merged);
  latency_record::parse_into(b.text(), merged);
  CHECK(merged.count() == 100);
  CHECK(merged.quantile(0.5) < 2e-3);
  CHECK(merged.quantile(0.99) > 0.9);
  latency_record empty;
  CHECK(empty.text().empty());
  latency_record::parse_into("", merged);  // an idle worker's record
  CHECK(merged.count() == 100);
  CHECK_THROWS_AS(latency_record::parse_into("12", merged), std::invalid_argument);
  CHECK_THROWS_AS(latency_record::parse_into("99999:1", merged), std::invalid_argument);
  CHECK_THROWS_AS(latency_record::parse_into("1:x", merged), std::invalid_argument);
}

TEST_CASE("a worker's line says what it did, and nothing else parses as one", "[bench]") {
  worker_report r;
  r.docs = 120;
  r.failed = 1;
  r.statements = 37;
  r.counts_statements = true;
  r.conflicts = 4;
  r.claim = "10:3,11:1";
  r.write = "";
  const auto back = parse_worker_line(worker_line(r));
  REQUIRE(back);
  CHECK(back->docs == 120);
  CHECK(back->failed == 1);
  CHECK(back->counts_statements);
  CHECK(back->statements == 37);
  CHECK(back->conflicts == 4);
  CHECK(back->claim == "10:3,11:1");
  CHECK(back->write.empty());
  r.counts_statements = false;
  const auto uncounted = parse_worker_line(worker_line(r));
  REQUIRE(uncounted);
  CHECK_FALSE(uncounted->counts_statements);
  CHECK_FALSE(parse_worker_line("bench-worker: ready"));
  CHECK_FALSE(parse_worker_line("dibs: error: no table"));
  CHECK_FALSE(parse_worker_line("bench-worker: docs=x failed=0 statements=1 conflicts=0 claim= write="));
}

TEST_CASE("a strategy's row and JSON", "[bench]") {
  strategy_figures f;
  f.strategy = "batch";
  f.docs = 1000;
  f.seconds = 2;
  f.statements = 50;
  f.conflicts = 3;
  f.claim_p50 = 0.0021;
  f.claim_p99 = 0.012;
  f.write_p50 = 0.0005;
  f.write_p99 = 12;
  CHECK(f.docs_per_s() == 500);
  REQUIRE(f.statements_per_doc());
  CHECK(*f.statements_per_doc() == Approx(0.05));
  CHECK(figures_row(f) == "| batch | 1000 | 500 | 0.050 | 3 | 2.10 ms | 12.00 ms | 500 µs | 12.0 s |");
  CHECK(figures_header(store_kind::mongodb).find("commands/doc") != std::string::npos);
  CHECK(figures_header(store_kind::mysql).find("statements/doc") != std::string::npos);
  const auto json = figures_json("mysql://app:***@db/geo", 1000, 2, "none", {f});
  CHECK(json.find("\"store\":\"mysql://app:***@db/geo\"") != std::string::npos);
  CHECK(json.find("\"processes\":2") != std::string::npos);
  CHECK(json.find("\"strategy\":\"batch\"") != std::string::npos);
  CHECK(json.find("\"docs_per_s\":500.000") != std::string::npos);
  CHECK(json.find("\"statements_per_doc\":0.050000") != std::string::npos);
  CHECK(json.find("\"claim_p99_ms\":12.0000") != std::string::npos);
  strategy_figures uncounted;
  uncounted.strategy = "x";
  CHECK(figures_row(uncounted) == "| x | 0 | 0 | - | 0 | - | - | - | - |");
  CHECK(figures_json("s", 1, 1, "none", {uncounted}).find("\"statements_per_doc\":null") != std::string::npos);
}

TEST_CASE("the flag --strategies names a store's own claim strategies", "[bench]") {
  CHECK(bench_strategies(store_kind::mongodb, "all") ==
        std::vector<std::string>{"batch", "lock-collection", "update-find", "find-and-modify"});
  CHECK(bench_strategies(store_kind::mongodb, "update-find,batch,update-find") ==
        std::vector<std::string>{"update-find", "batch"});
  CHECK(bench_strategies(store_kind::mysql, "all") == std::vector<std::string>{"skip-locked"});
  CHECK(bench_strategies(store_kind::postgresql, "batch") == std::vector<std::string>{"skip-locked"});
  try {
    bench_strategies(store_kind::postgresql, "find-and-modify");
    FAIL("accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("--strategies: 'find-and-modify'") != std::string::npos);
    CHECK(std::string(e.what()).find("skip-locked") != std::string::npos);
  }
  CHECK_THROWS_AS(bench_strategies(store_kind::mongodb, ""), std::invalid_argument);
}

TEST_CASE("scratch names and the table a URI names", "[bench]") {
  const auto a = scratch_name(), b = scratch_name();
  CHECK(is_scratch_name(a));
  CHECK(a != b);
  CHECK_FALSE(is_scratch_name("dibs_bench_"));
  CHECK_FALSE(is_scratch_name("jobs"));
  CHECK_FALSE(is_scratch_name("dibs_bench_0123456789aG"));
  CHECK_FALSE(is_scratch_name("dibs_bench_0123456789ab.lock"));
  CHECK_FALSE(is_scratch_name("dibs_bench_0123456789ab`; DROP"));
  CHECK(named_table("mysql://u@h/db?table=jobs") == "jobs");
  CHECK(named_table("postgresql://u@h/db?sslmode=disable&table=t1") == "t1");
  CHECK(named_table("mongodb://h/db?collection=msgs&w=majority") == "msgs");
  CHECK(named_table("mongodb://h/db?w=majority").empty());
  CHECK(named_table("mysql://u@h/db").empty());
}
