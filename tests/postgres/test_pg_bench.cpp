// dibs bench on PostgreSQL, as a user runs it: a row with docs/s and statements per document, the
// scratch (and its notify function) gone afterwards, and the user's tables untouched: named in
// --store, handed to a worker, or named like a scratch without the marker.
#include "postgres/pg_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/postgres/pg_store.hpp>

#include <catch2/catch.hpp>
#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace dibs;

namespace {
using test::run_dibs;
pg::pg_options options_for(const std::string& table) {
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  return o;
}
// The scratch-like tables and functions of the current schema.
std::string scratch_objects(pg::pg_store& s) {
  return s.query_value("SELECT coalesce(string_agg(relname, ',' ORDER BY relname), '') FROM pg_class WHERE relname LIKE "
                       "'dibs\\_bench\\_%' AND relnamespace = to_regnamespace(current_schema())::oid")
             .value_or("") +
         "|" +
         s.query_value("SELECT coalesce(string_agg(proname, ',' ORDER BY proname), '') FROM pg_proc WHERE proname LIKE "
                       "'dibs\\_bench\\_%'")
             .value_or("");
}
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("dibs bench on PostgreSQL prints docs/s and statements per document, writes JSON, and drops its scratch",
          "[postgres][bench]") {
  pg::pg_store s(options_for(test::unique_pg_table("benchbase")));
  const auto before = scratch_objects(s);
  const std::string json = "/tmp/dibs_bench_pg_test_" + std::to_string(::getpid()) + ".json";
  for (const std::string processes : {"1", "2"}) {
    std::string out;
    const int rc = run_dibs({"bench", "--store", test::postgres_base_uri(), "--docs", "400", "--processes", processes,
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
    CHECK(double(row["statements_per_doc"]) > 0);
    CHECK(double(row["statements_per_doc"]) < 2);
    CHECK(double(row["write_p50_ms"]) > 0);
    CHECK(scratch_objects(s) == before);
  }
  std::remove(json.c_str());
}

TEST_CASE("dibs bench on PostgreSQL refuses the user's tables with exit 2 and leaves them untouched", "[postgres][bench]") {
  const auto table = test::unique_pg_table("benchmine");
  pg::pg_store s(options_for(table));
  s.seed(5, 1);
  const std::string lookalike = "dibs_bench_" + std::string("0123456789ab");
  s.execute("CREATE TABLE IF NOT EXISTS " + lookalike + " (id INT PRIMARY KEY); INSERT INTO " + lookalike +
            " VALUES (1) ON CONFLICT DO NOTHING");
  std::string out;
  CHECK(run_dibs({"bench", "--store", test::postgres_uri_for(table)}, out) == 2);
  CHECK_THAT(out, Catch::Contains("dibs bench will not use the table '" + table + "'"));
  for (const auto& worker_on : {table, lookalike}) {
    CHECK(run_dibs({"bench", "--store", test::postgres_base_uri(), "--worker", worker_on}, out) == 2);
    INFO(out);
    CHECK_THAT(out, Catch::Contains("'" + worker_on + "' in database "));
    CHECK_THAT(out, Catch::Contains("is not a scratch table dibs bench made"));
  }
  REQUIRE(run_dibs({"bench", "--store", test::postgres_base_uri(), "--clean"}, out) == 0);
  CHECK_THAT(out, !Catch::Contains(lookalike));
  CHECK(s.query_value("SELECT count(*) FROM " + table + " WHERE location IS NULL") == std::optional<std::string>("5"));
  CHECK(s.query_value("SELECT count(*) FROM " + lookalike) == std::optional<std::string>("1"));
  CHECK_FALSE(s.query_value("SELECT obj_description('" + table + "'::regclass, 'pg_class')"));
  s.execute("DROP TABLE " + lookalike);
}
