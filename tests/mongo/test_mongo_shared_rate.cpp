// `--rate-scope store` on MongoDB: four `dibs enrich` processes share one --rate through the
// collection dibs_rate (a compare-and-set on one document per origin).
#include "support/mongo_env.hpp"
#include "support/shared_rate_runs.hpp"

#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

TEST_CASE("four dibs enrich processes with --rate-scope store keep one --rate together on MongoDB",
          "[mongo][enrich][rate][shared-rate]") {
  stub::stub_options so;
  so.record = true;
  stub::ipapi_stub api(so);
  api.start();
  mongo::mongo_options o;
  o.uri = test::mongodb_uri();
  o.db = "dibs_test";
  o.collection = test::unique_collection("sharedrate");
  mongo::mongo_store s(o);
  mongo::drop(s);
  REQUIRE(s.seed(80, 17) == 80);

  test::enrich_together(o.uri, api, 4, "10/s", {"--db", o.db, "--collection", o.collection});
  const auto st = s.stats_blocking();
  CHECK(st.done == 80);
  CHECK(st.drained());
  const auto times = api.served_times();
  REQUIRE(times.size() == 80 + 4);  // every document once, and each process's pre-flight
  CHECK(test::busiest(times, 1000ms) <= 10 + 4 * 5);  // the rate, and one block of burst per process
  CHECK(times.back() - times.front() >= 5400ms);      // (84 - 10 - 20) requests at 10/s at least
}

TEST_CASE("an X-Rl: 0 one process saw holds the next process on MongoDB until X-Ttl has passed",
          "[mongo][enrich][rate][shared-rate]") {
  stub::stub_options so;
  so.record = true;
  so.rate_limit = 3;  // the 3rd answer of a 4 s window says X-Rl: 0, X-Ttl: 4
  so.rate_window = 4000ms;
  stub::ipapi_stub api(so);
  api.start();
  mongo::mongo_options o;
  o.uri = test::mongodb_uri();
  o.db = "dibs_test";
  o.collection = test::unique_collection("sharedpause");
  mongo::mongo_store s(o);
  mongo::drop(s);
  REQUIRE(s.seed(3, 18) == 3);
  const std::vector<std::string> where{"--db", o.db, "--collection", o.collection, "--no-preflight"};
  test::enrich_together(o.uri, api, 1, "100/s", where);
  REQUIRE(api.served_times().size() == 3);

  REQUIRE(s.seed(2, 19) == 2);  // a second process, in the same window: alone it would meet a 429
  test::enrich_together(o.uri, api, 1, "100/s", where);
  CHECK(s.stats_blocking().done == 5);
  CHECK(api.rate_limited() == 0);  // it waited out the first process's stop
  const auto times = api.served_times();
  REQUIRE(times.size() == 5);
  CHECK(times[3] - times[0] >= 3000ms);
}
