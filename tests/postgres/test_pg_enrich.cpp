// `dibs enrich --store postgresql://...` as users run it, against the stub API: seeded by
// `dibs seed`, run to the end, every row done once with its answer, a private address failed with
// the API's reason, and `dibs status` counting the same.
#include "postgres/pg_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/postgres/pg_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("dibs enrich finishes a PostgreSQL table, and a private address gets ip-api's 'no data' as its answer, not a failure",
          "[postgres][enrich][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto table = test::unique_pg_table("enrich");
  const auto uri = test::postgres_uri_for(table);
  pg::pg_options o;
  o.uri = uri;
  pg::pg_store s(o);
  s.reset_table();
  std::string out;
  test::child_process seed({dibs::test::dibs_binary(), "seed", "--store", uri, "--docs", "3000"});
  REQUIRE(seed.finish(out) == 0);
  s.execute("INSERT INTO " + table + " (\"originatingIp\") VALUES ('192.168.7.7')");

  out.clear();
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                           "--concurrency", "300", "--shards", "2", "--no-progress"});
  const int rc = run.finish(out);
  INFO(out);
  REQUIRE(rc == 0);  // "no data" for the private address is no failure
  CHECK(test::last_line(out).rfind("summary: completed=3000 failed=0 lost_leases=0 released=0 ", 0) == 0);
  CHECK_THAT(test::last_line(out), Catch::Contains(" no_data=1"));
  CHECK(api.requests() == 3001 + 1);  // each row once, and the pre-flight's one request (not written)
  auto st = s.stats_blocking();
  CHECK(st.done == 3001);
  CHECK(st.failed == 0);
  CHECK(st.drained());
  // Each row its own address's answer, the "no data" one too (ip-api names the address in both).
  CHECK(s.query_value("SELECT count(*) FROM " + table + " WHERE location->>'query' = \"originatingIp\"") ==
        std::optional<std::string>("3001"));
  CHECK(s.query_value("SELECT count(*) FROM " + table + " WHERE attempts = 1") == std::optional<std::string>("3001"));
  CHECK(s.query_value("SELECT location->>'message' FROM " + table + " WHERE \"originatingIp\" = '192.168.7.7'") ==
        std::optional<std::string>("private range"));
  CHECK(s.query_value("SELECT count(*) FROM " + table + " WHERE lock_token IS NOT NULL") == std::optional<std::string>("0"));

  out.clear();
  test::child_process status({dibs::test::dibs_binary(), "status", "--store", uri});
  REQUIRE(status.finish(out) == 0);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("done=3000 failed=0 no_data=1"));
}

TEST_CASE("PostgreSQL: a mistyped {field} or a closed API port is refused before a row is claimed", "[postgres][enrich][preflight]") {
  const auto table = test::unique_pg_table("preflight");
  const auto uri = test::postgres_uri_for(table);
  pg::pg_options o;
  o.uri = uri;
  pg::pg_store s(o);
  s.reset_table();
  REQUIRE(s.seed(10, 3) == 10);
  auto untouched = [&] {
    return s.query_value("SELECT count(*) FROM " + table +
                         " WHERE lock_token IS NULL AND attempts = 0 AND failed_at IS NULL AND location IS NULL") ==
           std::optional<std::string>("10");
  };
  std::string out;
  // Quoted names are exact in PostgreSQL: the column is "originatingIp", not originatingip.
  test::child_process typo({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", "http://127.0.0.1:1/json/{originatingip}",
                            "--no-progress"},
                           true);
  CHECK(typo.finish(out) == 2);
  CHECK_THAT(out, Catch::Contains("--url reads the field 'originatingip', but table " + table + " has no such column") &&
                      Catch::Contains("did you mean 'originatingIp'?") &&
                      Catch::Contains("(its columns: id, originatingIp, location"));
  CHECK(untouched());

  out.clear();
  test::child_process closed({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", "http://127.0.0.1:1/json/{originatingIp}",
                              "--no-progress"},
                             true);
  CHECK(closed.finish(out) == 2);
  CHECK_THAT(out, Catch::Contains("the API can't be used: --url http://127.0.0.1:1/json/") &&
                      Catch::Contains("Connection refused"));
  CHECK(untouched());
}
