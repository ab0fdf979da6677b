// The API goes away for ten seconds in the middle of `dibs enrich` over MariaDB, as a real API
// has a bad minute: no row may spend an attempt on it (--max-attempts 1 would fail any that did),
// the run says once that the API is down and once that it is back, and it ends with every row done.
#include "support/backend.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;


TEST_CASE("an API outage of 10 s in the middle of dibs enrich costs no row an attempt", "[mysql][enrich][outage]") {
  auto store = test::this_backend().fresh("outage");
  const auto& table = store.name;
  const auto& uri = store.uri();
  REQUIRE(store.seed(600, 9) == 600);
  auto count = [&](const std::string& where) {
    return std::stoi(store.query_value("SELECT COUNT(*) FROM " + table + " WHERE " + where).value_or("-1"));
  };

  auto api = std::make_unique<stub::ipapi_stub>(stub::stub_options::loopback(20ms));
  api->start();
  const auto port = api->port();
  const auto url = api->base_url() + "/json/{originatingIp}";
  // 4 at a time, 20 ms each: about 200 rows a second, so rows are left when the API goes away
  // below even if this test polls slowly.
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", url, "--max-attempts", "1",
                           "--concurrency", "4", "--no-progress", "--log-level", "warn"},
                          true);

  // The API answers for a while, then its port refuses connections ...
  REQUIRE(test::eventually([&] { return count("location IS NOT NULL") >= 60; }, 120s));
  api->stop();
  api.reset();
  // ... for ten seconds (the outage itself, not a wait for anything) ...
  std::this_thread::sleep_for(10s);
  CHECK(count("dibs_failed_at IS NOT NULL") == 0);
  CHECK(count("location IS NULL") > 0);  // the run really was stopped by the outage
  // ... and comes back on the same port.
  auto opts = stub::stub_options::loopback(20ms);
  opts.port = port;
  stub::ipapi_stub back(opts);
  back.start();

  std::string out;
  const int rc = run.finish(out);
  INFO(out);
  // ip-api's profile fails the private addresses the seed may hold; an outage fails nothing.
  CHECK(count("dibs_failed_at IS NOT NULL AND dibs_error NOT LIKE '%private range%' AND dibs_error NOT LIKE '%reserved range%'") == 0);
  CHECK(rc == (count("dibs_failed_at IS NOT NULL") == 0 ? 0 : 1));
  CHECK(count("location IS NULL AND dibs_failed_at IS NULL") == 0);
  CHECK(count("dibs_lock_token IS NOT NULL") == 0);
  CHECK(count("dibs_attempts <> 1") == 0);  // claimed once each: the rows that met the outage kept their claim
  CHECK_THAT(out, Catch::Contains("the API looks down"));
  CHECK_THAT(out, Catch::Contains("the API answers again"));
}
