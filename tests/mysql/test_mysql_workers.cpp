// Workers you can name and release, over MariaDB: lease holders, the operator's release (fenced:
// the released worker's late write is discarded, another worker completes the row once), and
// `dibs release` / `dibs status` as users run them (exit codes, --yes, the table's state).
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/worker_release.hpp"
#include "support/run_dibs.hpp"

#include <adapters/mysql/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

using namespace dibs;

namespace {
// stdin from /dev/null: what a script or a cron job gives dibs (and never this test's terminal).
std::pair<int, std::string> run_dibs(std::vector<std::string> args) {
  return test::run_dibs(std::move(args), test::stdin_from::dev_null);
}
}  // namespace

TEST_CASE("MariaDB lists lease holders and releases a worker's leases, fenced", "[mysql][workers]") {
  const auto table = test::unique_table("workers");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);
  s.reset_table();
  REQUIRE(s.seed(10, 3) == 10);
  test::check_worker_release(s);
  // Each released row was claimed twice (the released claim's attempt counted) and written once.
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE attempts = 2") == std::optional<std::string>("3"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL") == std::optional<std::string>("9"));
}

TEST_CASE("dibs release frees a dead worker's MariaDB leases with --yes, and dibs status shows the holders",
          "[mysql][workers][cli][e2e]") {
  using namespace std::chrono_literals;
  const auto table = test::unique_table("release");
  const auto uri = test::mysql_uri_for(table);
  sql::mysql_options o;
  o.uri = uri;
  sql::mysql_store s(o);
  s.reset_table();
  REQUIRE(s.seed(6, 4) == 6);
  REQUIRE(s.claim_blocking({2, "pod-a-0", 60s, 0s}).size() == 2);
  REQUIRE(s.claim_blocking({1, "pod-a-1", 60s, 0s}).size() == 1);
  REQUIRE(s.claim_blocking({1, "pod-b-0", 60s, 0s}).size() == 1);
  s.execute("UPDATE " + table + " SET lock_until = NOW(6) - INTERVAL 30 SECOND WHERE lock_by = 'pod-a-1'");

  auto [rc, out] = run_dibs({"status", "--store", uri});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("leases by worker:\n  pod-a-0  2 leased  (earliest until in "));
  CHECK_THAT(out, Catch::Contains("  pod-a-1  1 leased, 1 expired  (earliest expired "));
  CHECK(test::last_line(out) == "status: pending=2 leased_live=3 leased_expired=1 done=0 failed=0");
  std::tie(rc, out) = run_dibs({"status", "--store", uri, "--json"});
  REQUIRE(rc == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(test::last_line(out)).get(doc));
  REQUIRE(simdjson::dom::array(doc["lease_holders"]).size() == 3);
  CHECK(std::string_view(doc["lease_holders"].at(0)["by"]) == "pod-a-0");
  CHECK(uint64_t(doc["lease_holders"].at(1)["expired"]) == 1);
  CHECK(double(doc["lease_holders"].at(1)["earliest_until_s"]) < -29);

  // Not a terminal and no --yes: refused (exit 2), nothing released.
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod-a"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("stdin is not a terminal: add --yes"));
  CHECK(s.stats_blocking().leased_live + s.stats_blocking().leased_expired == 4);
  // A name that is no worker id: refused naming the flag.
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod a", "--yes"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--worker 'pod a' must be printable ASCII"));

  // On a terminal (script(1) gives it one) it asks: "n" keeps the leases (exit 1), "y" frees them.
  auto on_a_terminal = [&](const std::string& answer) {
    test::child_process p({"sh", "-c",
                           "printf '" + answer + "\\n' | DIBS=\"$0\" DIBS_URI=\"$1\" script -qec "
                           "'exec \"$DIBS\" release --store \"$DIBS_URI\" --worker pod-a' /dev/null",
                           DIBS_BIN_PATH, uri},
                          true);
    std::string said;
    const int code = p.finish(said);
    return std::pair{code, said};
  };
  std::tie(rc, out) = on_a_terminal("n");
  CHECK(rc == 1);
  CHECK_THAT(out, Catch::Contains("release 3 lease(s) of worker pod-a in "));
  CHECK_THAT(out, Catch::Contains("release: nothing released"));
  CHECK(s.stats_blocking().leased_live + s.stats_blocking().leased_expired == 4);
  std::tie(rc, out) = on_a_terminal("y");
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("release: 3 leases of worker pod-a released in "));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE lock_by IS NULL AND lock_token IS NULL AND lock_until IS NULL") ==
        std::optional<std::string>("5"));
  CHECK(s.query_value("SELECT lock_by FROM " + table + " WHERE lock_token IS NOT NULL") == std::optional<std::string>("pod-b-0"));
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod-a", "--yes"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("release: 0 leases of worker pod-a released"));
}
