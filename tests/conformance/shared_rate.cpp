// `--rate-scope store` on every store: four `dibs enrich` processes share one --rate through the
// store (the table dibs_rate on a SQL store), and a stop the API gave one process holds for the next.
#include "support/backend.hpp"
#include "support/shared_rate_runs.hpp"

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::db;

// The stub's origin's rows in dibs_rate that satisfy `condition` (SQL stores; nullopt elsewhere).
std::optional<std::string> rate_records(test::backend_table& s, const stub::ipapi_stub& api, const std::string& condition) {
  return s.query_value("SELECT COUNT(*) FROM dibs_rate WHERE origin = 'http://127.0.0.1:" + std::to_string(api.port()) +
                       "' AND " + condition);
}
std::vector<std::string> beyond_store(const test::backend_table& s, std::vector<std::string> more = {}) {
  std::vector<std::string> flags(s.where.begin() + 2, s.where.end());  // --db, --collection
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}
}  // namespace

BACKEND_TEST_CASE("four dibs enrich processes with --rate-scope store keep one --rate together",
                  "[enrich][rate][shared-rate]") {
  stub::stub_options so;
  so.record = true;
  stub::ipapi_stub api(so);
  api.start();
  auto s = db.fresh("sharedrate");
  REQUIRE(s.seed(80, 17) == 80);

  // 10/s shared: blocks of 5 slots (half a second). Alone, each process would go 10/s: 40/s together.
  test::enrich_together(s.uri(), api, 4, "10/s", beyond_store(s));
  const auto st = s.stats_blocking();
  CHECK(st.done == 80);
  CHECK(st.drained());
  const auto times = api.served_times();
  // Every row once, and each process's pre-flight unless its answer served its row (the four
  // may ask the same first pending row: one answer is used, the others were bought twice).
  REQUIRE(times.size() >= 80);
  REQUIRE(times.size() <= 80 + 4);
  // Never over the limit in any second, but for one block of burst per process.
  CHECK(test::busiest(times, 1000ms) <= 10 + 4 * 5);
  // N requests at 10/s, less the bursts, can't take less than (N - 10 - 20) / 10 s.
  CHECK(times.back() - times.front() >= std::chrono::milliseconds(100 * (static_cast<long>(times.size()) - 30)));
  // The record: one row for the stub's origin, its schedule moved on.
  if (db.sql) CHECK(rate_records(s, api, "tat_us > 0") == std::optional<std::string>("1"));
}

BACKEND_TEST_CASE("an X-Rl: 0 one process saw holds the next process until X-Ttl has passed",
                  "[enrich][rate][shared-rate]") {
  stub::stub_options so;
  so.record = true;
  so.rate_limit = 3;  // ip-api's rule with a 4 s window: the 3rd answer says X-Rl: 0, X-Ttl: 4
  so.rate_window = 4000ms;
  stub::ipapi_stub api(so);
  api.start();
  auto s = db.fresh("sharedpause");
  REQUIRE(s.seed(3, 18) == 3);
  test::enrich_together(s.uri(), api, 1, "100/s", beyond_store(s, {"--no-preflight"}));
  REQUIRE(api.served_times().size() == 3);
  CHECK(api.rate_limited() == 0);
  // The stop is in the record for every process (written before the first process ended; whether
  // it still holds is what the second process below shows).
  if (db.sql) CHECK(rate_records(s, api, "paused_until_us > 0") == std::optional<std::string>("1"));

  // A second process, in the same window: alone it would send at once and meet a 429.
  REQUIRE(s.seed(2, 19) == 2);
  test::enrich_together(s.uri(), api, 1, "100/s", beyond_store(s, {"--no-preflight"}));
  CHECK(s.stats_blocking().done == 5);
  CHECK(api.rate_limited() == 0);  // it waited out the first process's stop
  const auto times = api.served_times();
  REQUIRE(times.size() == 5);
  CHECK(times[3] - times[0] >= 3000ms);  // the window (X-Ttl rounds up the rest of it) passed first
}
