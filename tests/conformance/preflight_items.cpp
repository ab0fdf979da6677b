// The pre-flight judges the API, not one item, on every store, against Python's http.server
// (tests/servers/small_api.py): a legitimate 404 among the items refuses nothing -- after `dibs
// retry --reason 'HTTP 404'` every pending item is one, and an item already done shows the path is
// right -- and its failure keeps the API's own words; an API that answers 200 with an HTML page is
// refused before any item is charged.
#include "http_servers/small_api.hpp"
#include "support/backend.hpp"
#include "support/raw_http.hpp"
#include "support/own_place.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
std::size_t requests_of(const test::small_api& api) {
  const auto stats = test::raw_http(static_cast<std::uint16_t>(api.port()), "GET", "/stats");
  return std::stoul(stats.body.substr(stats.body.find("\"requests\": ") + 12));
}

std::vector<std::string> with(const std::string& command, std::vector<std::string> args) {
  args.insert(args.begin(), command);
  return args;
}
}  // namespace

BACKEND_TEST_CASE("a legitimate 404 among the items refuses no run, and the failure keeps the API's own words",
                  "[preflight][own-table]") {
  test::small_api api("keepalive", {"--not-found-share", "0.3"});
  auto s = test::db.fresh("pf_legit");
  REQUIRE(s.seed(30, 11) == 30);
  const std::vector<std::string> url{"--url", api.base_url() + "/json/{originatingIp}", "--no-progress"};
  // The first run without its pre-flight: with no item done yet, three claimed items that are all
  // "not found" (0.3^3: 2.7% of runs here, the items being claimed at random) read as a wrong
  // path, as the README's limits say. What this case checks is the run that has a done item.
  auto first = url;
  first.push_back("--no-preflight");
  auto [rc, out] = test::dibs_at(test::db, s.name, with("enrich", first));
  INFO(out);
  const auto failed = s.stats_blocking().failed;
  REQUIRE(failed > 0);  // the keys the API has nothing for (a third of them, by their hash)
  CHECK(rc == 1);
  std::tie(rc, out) = test::dibs_at(test::db, s.name, {"status"});
  CHECK_THAT(out, Catch::Contains(std::to_string(failed) + "  HTTP 404 Not Found: no location known for this address"));

  // Every pending item is now a real "not found": the pre-flight asks one, then an item already
  // done, and goes on (before: "HTTP 404 Not Found: almost certainly a wrong URL path", exit 2).
  std::tie(rc, out) = test::dibs_at(test::db, s.name, {"retry", "--reason", "HTTP 404"});
  CHECK_THAT(out, Catch::Contains("retry: " + std::to_string(failed) + " failed item"));
  const auto before = requests_of(api);
  std::tie(rc, out) = test::dibs_at(test::db, s.name, with("enrich", url));
  CHECK(rc == 1);  // they fail again, as they should: the API has nothing for them
  CHECK_THAT(out, Catch::Contains("an item already done was answered: the path is right"));
  CHECK(requests_of(api) - before <= failed + 2);  // each once, and the pre-flight's two
  CHECK(s.stats_blocking().failed == failed);
}

BACKEND_TEST_CASE("an API that answers 200 with an HTML page is refused before any item is charged", "[preflight][own-table]") {
  test::small_api api("keepalive", {"--html"});
  auto s = test::db.fresh("pf_html");
  REQUIRE(s.seed(20, 12) == 20);
  const auto [rc, out] = test::dibs_at(test::db, s.name, {"enrich", "--url", api.base_url() + "/json/{originatingIp}", "--no-progress"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("HTTP 200 OK with an HTML page (<title>Welcome to nginx!</title>) where the run expects a "
                                  "JSON object: every item would be charged and fail"));
  CHECK(requests_of(api) == 1);  // the pre-flight's one: no item claimed, charged or failed
  const auto st = s.stats_blocking();
  CHECK(st.pending == 20);
  CHECK(st.failed == 0);
}

BACKEND_TEST_CASE("processes starting at once each buy their own items: the pre-flight's item is claimed, never asked twice",
                  "[preflight][budget][e2e]") {
  test::small_api api("keepalive", {"--latency-ms", "20"});
  auto s = test::db.fresh("pf_four");
  REQUIRE(s.seed(40, 13) == 40);
  const auto where = test::db.where_for(s.name);
  std::vector<std::unique_ptr<test::child_process>> runs;
  for (int i = 0; i < 4; ++i) {
    std::vector<std::string> run{"timeout", "--signal=KILL", "120", test::dibs_binary(), "enrich"};
    run.insert(run.end(), where.begin(), where.end());
    run.push_back("--no-progress");
    run.push_back("--url");
    run.push_back(api.base_url() + "/json/{originatingIp}");
    runs.push_back(std::make_unique<test::child_process>(run, true));
  }
  for (auto& r : runs) {
    std::string out;
    const int rc = r->finish(out);
    INFO(out);
    CHECK(rc == 0);
  }
  // Each process's pre-flight asked the first pending item, unclaimed, and only one process's run
  // used that answer: the same item bought up to 4 times.
  const auto asked = test::raw_http(static_cast<std::uint16_t>(api.port()), "GET", "/asked");
  CHECK_THAT(asked.body, Catch::Contains("\"keys\": 40") && Catch::Contains("\"again\": {}"));
  CHECK(requests_of(api) == 40);
  CHECK(s.stats_blocking().done == 40);
}
