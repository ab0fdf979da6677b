// `dibs status` and `dibs release` over a SQL store (MariaDB, PostgreSQL) as an operator runs
// them, the same on both: the lease holders by worker (text and JSON), a release refused without
// a terminal or --yes and for a bad name, asked on a terminal (script(1)), and then done, leaving
// the other worker's lease alone. `Store` is mysql_store or pg_store on `table`, which `uri`
// names; `expire_sql` moves pod-a-1's lease 30 s into the past in that dialect.
#pragma once

#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/run_sync.hpp"

#include <dibs/admin_store.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace dibs::test {

template <class Store>
void check_release_cli(Store& s, const std::string& table, const std::string& uri, const std::string& expire_sql) {
  using namespace std::chrono_literals;
  s.reset_table();
  REQUIRE(s.seed(6, 4) == 6);
  auto claim = [&](std::size_t n, const char* by) { return run_sync(s.claim(claim_request{n, by, 60s, 0s})).size(); };
  REQUIRE(claim(2, "pod-a-0") == 2);
  REQUIRE(claim(1, "pod-a-1") == 1);
  REQUIRE(claim(1, "pod-b-0") == 1);
  s.execute(expire_sql);

  auto [rc, out] = run_dibs({"status", "--store", uri}, stdin_from::dev_null);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("leases by worker:\n  pod-a-0  2 leased  (earliest until in "));
  CHECK_THAT(out, Catch::Contains("  pod-a-1  1 leased, 1 expired  (earliest expired "));
  CHECK(last_line(out) == "status: pending=2 leased_live=3 leased_expired=1 done=0 failed=0");
  std::tie(rc, out) = run_dibs({"status", "--store", uri, "--json"}, stdin_from::dev_null);
  REQUIRE(rc == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(last_line(out)).get(doc));
  REQUIRE(simdjson::dom::array(doc["lease_holders"]).size() == 3);
  CHECK(std::string_view(doc["lease_holders"].at(0)["by"]) == "pod-a-0");
  CHECK(uint64_t(doc["lease_holders"].at(1)["expired"]) == 1);
  CHECK(double(doc["lease_holders"].at(1)["earliest_until_s"]) < -29);

  // Not a terminal and no --yes: refused (exit 2), nothing released.
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod-a"}, stdin_from::dev_null);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("stdin is not a terminal: add --yes"));
  CHECK(s.stats_blocking().leased_live + s.stats_blocking().leased_expired == 4);
  // A name that is no worker id: refused naming the flag.
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod a", "--yes"}, stdin_from::dev_null);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--worker 'pod a' must be printable ASCII"));

  // On a terminal (script(1) gives it one) it asks: "n" keeps the leases (exit 1), "y" frees them.
  auto on_a_terminal = [&](const std::string& answer) {
    child_process p({"sh", "-c",
                           "printf '" + answer + "\\n' | DIBS=\"$0\" DIBS_URI=\"$1\" script -qec "
                           "'exec \"$DIBS\" release --store \"$DIBS_URI\" --worker pod-a' /dev/null",
                           dibs_binary(), uri},
                          true);
    std::string said;
    const int code = p.finish(said);
    return std::pair{code, said};
  };
  std::tie(rc, out) = on_a_terminal("n");
  CHECK(rc == 1);
  // pod-a-0's leases run 60 s more: the worker renews them, and the question says it looks live.
  CHECK_THAT(out, Catch::Contains("worker pod-a looks LIVE: its latest lease runs "));
  CHECK_THAT(out, Catch::Contains("release 3 lease(s) of worker pod-a in "));
  CHECK_THAT(out, Catch::Contains("release: nothing released"));
  CHECK(s.stats_blocking().leased_live + s.stats_blocking().leased_expired == 4);
  std::tie(rc, out) = on_a_terminal("y");
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("release: 3 leases of worker pod-a released in "));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE dibs_lock_by IS NULL AND dibs_lock_token IS NULL AND dibs_lock_until IS NULL") ==
        std::optional<std::string>("5"));
  CHECK(s.query_value("SELECT dibs_lock_by FROM " + table + " WHERE dibs_lock_token IS NOT NULL") == std::optional<std::string>("pod-b-0"));
  // With --yes a live worker is released too (the operator said so), with a warning.
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod-b", "--yes"}, stdin_from::dev_null);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("warning: worker pod-b looks LIVE"));
  CHECK_THAT(out, Catch::Contains("release: 1 lease of worker pod-b released in "));
  std::tie(rc, out) = run_dibs({"release", "--store", uri, "--worker", "pod-a", "--yes"}, stdin_from::dev_null);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("release: 0 leases of worker pod-a released"));
  CHECK_THAT(out, !Catch::Contains("LIVE"));  // it holds nothing: nothing to warn of
}

}  // namespace dibs::test
