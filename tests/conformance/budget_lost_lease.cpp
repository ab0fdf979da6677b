// A call budget and a lost lease, on every store: `dibs enrich --max-calls 6 --claim-batch 2`
// against Python's http.server answering slowly (tests/servers/small_api.py), and, while its
// calls are under way, `dibs release` of its worker (an operator freeing a host thought dead).
// The items whose lease went give their reservation back once their calls end: the run goes on
// claiming, spends its six calls and ends with exit status 4. Before, a lost lease kept its
// reservation for ever: claims returned nothing, "spent" never came, the run sat idle until
// killed. The API never sees more than the budget.
#include "http_servers/small_api.hpp"
#include "support/api_items.hpp"
#include "support/backend.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

BACKEND_TEST_CASE("a lease lost while its call runs gives the budget's reservation back: the run spends its calls and ends",
                  "[budget][e2e]") {
  // Slower than the lease keeper's renewal (a third of --lease): the keeper, not the write, finds
  // the lease gone, and nothing is written for the item.
  test::small_api api("keepalive", {"--latency-ms", "2500"});
  auto s = test::db.fresh("budget_lost");
  REQUIRE(s.seed(30, 21) == 30);
  const auto where = test::db.where_for(s.name);
  std::vector<std::string> run{"timeout", "--signal=KILL", "120", test::dibs_binary(), "enrich"};
  run.insert(run.end(), where.begin(), where.end());
  for (const char* a : {"--max-calls", "6", "--claim-batch", "2", "--concurrency", "2", "--lease", "2s", "--worker-id",
                        "budget-lost", "--no-preflight", "--no-progress"})
    run.emplace_back(a);
  run.push_back("--url");
  run.push_back(api.base_url() + "/json/{originatingIp}");
  test::child_process enrich(run, true);
  const auto port = static_cast<std::uint16_t>(api.port());
  REQUIRE(test::eventually([&] { return test::stat_of(port, "in_flight") >= 1; }));
  std::vector<std::string> release{"release"};
  release.insert(release.end(), where.begin(), where.end());
  for (const char* a : {"--worker", "budget-lost", "--yes"}) release.emplace_back(a);
  const auto [release_rc, release_out] = test::run_dibs_within(std::chrono::seconds(60), release);
  INFO(release_out);
  CHECK(release_rc == 0);
  std::string out;
  const int rc = enrich.finish(out);
  INFO(out);
  CHECK(rc == 4);  // spent, and ended by itself (a kill would be 137)
  CHECK_THAT(out, Catch::Contains("--max-calls 6 spent: this process made 6 calls"));
  CHECK(test::stat_of(port, "requests") <= 6);
}
