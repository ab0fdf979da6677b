// `dibs enrich` over a SQL store as users run it, against the stub API: seeded by `dibs seed`,
// run to the end (on two shards), every row done once with its own answer, a private address
// answered with ip-api's "no data" (not failed), and `dibs status` counting the same.
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::db;
}  // namespace

BACKEND_TEST_CASE("dibs enrich finishes a table, and a private address gets ip-api's 'no data' as its answer, not a failure",
                  "[enrich][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = db.fresh("enrich");
  const auto& table = s.name;
  const auto& source = db.sql_of().source_column;
  const auto location = [&](const std::string& field) { return db.sql_of().json_text("location", field); };
  std::string out;
  test::child_process seed({dibs::test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "3000"});
  REQUIRE(seed.finish(out) == 0);
  s.execute("INSERT INTO " + table + " (" + source + ") VALUES ('192.168.7.7')");

  out.clear();
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", s.uri(), "--url",
                           api.base_url() + "/json/{originatingIp}", "--concurrency", "300", "--shards", "2", "--no-progress"});
  const int rc = run.finish(out);
  INFO(out);
  REQUIRE(rc == 0);  // "no data" for the private address is no failure
  CHECK(test::last_line(out).rfind("summary: completed=3000 failed=0 lost_leases=0 released=0 ", 0) == 0);
  CHECK_THAT(test::last_line(out), Catch::Contains(" no_data=1"));
  CHECK(api.requests() == 3001);  // each row once: the pre-flight's answer is its row's
  auto st = s.stats_blocking();
  CHECK(st.done == 3001);
  CHECK(st.failed == 0);
  CHECK(st.drained());
  // Each row its own address's answer, the "no data" one too (ip-api names the address in both).
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE " + location("query") + " = " + source) ==
        std::optional<std::string>("3001"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE dibs_attempts = 1") == std::optional<std::string>("3001"));
  CHECK(s.query_value("SELECT " + location("message") + " FROM " + table + " WHERE " + source + " = '192.168.7.7'") ==
        std::optional<std::string>("private range"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE dibs_lock_token IS NOT NULL") == std::optional<std::string>("0"));

  out.clear();
  test::child_process status({dibs::test::dibs_binary(), "status", "--store", s.uri()});
  REQUIRE(status.finish(out) == 0);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("done=3000 failed=0 no_data=1"));
}
