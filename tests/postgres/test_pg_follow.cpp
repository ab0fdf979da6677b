// `dibs enrich --follow` on PostgreSQL wakes on LISTEN/NOTIFY: the table's INSERT trigger announces
// new rows on its channel, and the run claims them without waiting for its next poll.
#include "support/backend.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <signal.h>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;


TEST_CASE("dibs enrich --follow on PostgreSQL listens on the table's channel and is woken by new rows",
          "[postgres][enrich][follow]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = test::this_backend().fresh("follow");
  const auto& table = s.name;
  const auto& uri = s.uri();
  auto value = [&](const std::string& select) { return s.query_value(select).value_or("?"); };

  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                           "--follow", "--no-progress", "--log-level", "debug"},
                          true);
  // The listener is up once the server shows its session's LISTEN done (idle: a LISTEN takes
  // effect when its transaction commits, and a NOTIFY committed while the statement still runs is
  // not delivered: the likely cause of one ctest -j4 run on a new machine where the run's poll
  // found the rows and "woken by NOTIFY" never came) ...
  const std::string listening =
      "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN \"dibs_" + table + "\"' AND state = 'idle'";
  REQUIRE(test::eventually([&] { return value(listening) == "1"; }));
  // ... and a producer's INSERT (one statement, any number of rows) wakes the run.
  s.execute("INSERT INTO " + table + " (\"originatingIp\") VALUES ('8.8.8.8'), ('1.1.1.1'), ('9.9.9.9')");
  REQUIRE(test::eventually([&] { return value("SELECT count(*) FROM " + table + " WHERE location IS NOT NULL") == "3"; }));

  run.signal(SIGTERM);
  std::string out;
  const int rc = run.finish(out);
  INFO(out);
  CHECK(rc == 0);  // --follow ended by SIGTERM with nothing failed
  CHECK_THAT(out, Catch::Contains("woken by NOTIFY on dibs_" + table));
  // The listener's connection is closed with the run (the server notices a moment later).
  CHECK(test::eventually([&] { return value(listening) == "0"; }));
}
