// A call budget kept in the store (`--budget N/day`) and shared by two processes calling a real
// API (tests/servers/shaped_api.py): between them, exactly the budget's calls; then each claims
// nothing more, says so in one line and exits with status 4; no row left pending spent an
// attempt; `dibs status` shows the budget used up. And a dry run leaves the table as it was.
#include "http_servers/shaped_api.hpp"
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::db;
}  // namespace

BACKEND_TEST_CASE("a --budget shared by two processes: its calls and no more, then exit status 4 and nothing claimed",
                  "[budget][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("budget");
  const auto& table = s.name;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "400"});
  REQUIRE(seed.finish(out) == 0);
  const std::vector<std::string> run = {test::dibs_binary(), "enrich", "--store", s.uri(), "--url",
                                        api.base_url() + "/geo/{originatingIp}", "--budget", "60/day",
                                        "--concurrency", "8", "--no-progress"};
  test::child_process a(run, true), b(run, true);
  std::string out_a, out_b;
  const int rc_a = a.finish(out_a), rc_b = b.finish(out_b);
  INFO(out_a);
  INFO(out_b);
  CHECK(rc_a == 4);
  CHECK(rc_b == 4);
  CHECK_THAT(out_a, Catch::Contains("--budget 60/day spent: this process made") && Catch::Contains("renews"));
  // Every call the budget had, each pre-flight's included, as the processes counted them.
  const auto made = [](const std::string& out) {
    const auto at = out.find("this process made ");
    return at == std::string::npos ? -1 : std::stoi(out.substr(at + 18));
  };
  CHECK(made(out_a) + made(out_b) == 60);
  // The API saw them all, and no more: a request is sent again only when no byte of it reached
  // the server (before, one abandoned on a connection the server's full backlog took late still
  // reached it: 61 seen once).
  CHECK(api.requests().size() == 60);
  // Each process that made calls spent its first on its pre-flight; one that started after the
  // budget ran out made none, pre-flight included. A pre-flight's answer is its row's, unless the
  // other process claimed that row first (both may ask the same first pending rows).
  const auto made_calls = [](const std::string& out) {
    const auto at = out.find("this process made ");
    return at != std::string::npos && out.compare(at + 18, 2, "0 ") != 0;
  };
  const int preflights = (made_calls(out_a) ? 1 : 0) + (made_calls(out_b) ? 1 : 0);
  CHECK(preflights >= 1);
  const auto rows = std::stoi(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL").value_or("-1"));
  CHECK(rows <= 60);
  CHECK(rows >= 60 - preflights);  // a pre-flight's row claimed by the other process was bought twice
  // What was never called for was never claimed: no attempt spent.
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NULL AND dibs_attempts > 0") ==
        std::optional<std::string>("0"));
  out.clear();
  test::child_process status({test::dibs_binary(), "status", "--store", s.uri()});
  REQUIRE(status.finish(out) == 0);
  INFO(out);
  CHECK_THAT(out, Catch::Contains(": 60 of 60 calls used, 0 left"));
}

BACKEND_TEST_CASE("a --dry-run 5 calls the API five times and leaves the table as it was", "[dry-run][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("dryrun");
  const auto& table = s.name;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "20"});
  REQUIRE(seed.finish(out) == 0);
  out.clear();
  test::child_process dry({test::dibs_binary(), "enrich", "--store", s.uri(), "--url", api.base_url() + "/geo/{originatingIp}",
                           "--dry-run", "5"},
                          true);
  const int rc = dry.finish(out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(api.requests().size() == 5);
  CHECK_THAT(out, Catch::Contains("dry run: 5 items, 5 calls to the API; nothing was claimed or written"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NULL AND dibs_attempts = 0 AND dibs_lock_token IS NULL") ==
        std::optional<std::string>("20"));
}
