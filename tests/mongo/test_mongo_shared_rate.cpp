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
