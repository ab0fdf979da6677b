// dibs init remembers: on a SQL store (MariaDB, PostgreSQL) a user's own table with `ip` and
// `geo`, prepared once with `dibs init --source ip --target geo`, is then counted, enriched,
// retried and released with only --store (and enrich's --url); a flag that contradicts the record
// is refused with both values named. `Store` runs statements on the database; `create_sql` makes
// the user's table `table` (columns visit_id, ip, geo) with three rows, in that dialect.
#pragma once

#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dibs::test {

template <class Store>
void check_recorded_settings(Store& s, const std::string& uri, const std::vector<std::string>& create_sql) {
  for (const auto& statement : create_sql) s.execute(statement);
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto dibs = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, {"--store", uri});
    return run_dibs(args, stdin_from::dev_null);
  };

  auto [rc, out] = dibs({"init", "--source", "ip", "--target", "geo"});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("recorded --source ip --target geo"));
  std::tie(rc, out) = dibs({"init", "--source", "ip", "--target", "geo"});  // again: nothing changes
  CHECK(rc == 0);

  // Only --store: not "--source reads the field 'originatingIp', but table ... has no such column".
  std::tie(rc, out) = dibs({"status"});
  CHECK(rc == 0);
  CHECK(last_line(out) == "status: pending=3 leased_live=0 leased_expired=0 done=0 failed=0");

  std::tie(rc, out) = dibs({"enrich", "--url", api.base_url() + "/json/{ip}", "--no-progress"});
  CHECK(rc == 0);
  CHECK(api.requests() == 3);  // each row once (the pre-flight's answer is its row's)
  std::tie(rc, out) = dibs({"status"});
  CHECK(last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=3 failed=0");
  std::tie(rc, out) = dibs({"retry"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending"));
  std::tie(rc, out) = dibs({"release", "--worker", "gone-host", "--yes"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("release: 0 leases of worker gone-host released"));

  // A flag that contradicts the record: refused (exit 2), both values named.
  std::tie(rc, out) = dibs({"status", "--target", "location"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--target location contradicts what dibs init recorded for table ") &&
                      Catch::Contains(": --target geo (leave --target out to use it"));
  std::tie(rc, out) = dibs({"enrich", "--url", api.base_url() + "/json/{client_ip}", "--no-progress"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--url reads the field 'client_ip', but dibs init recorded --source ip for table "));
  CHECK(api.requests() == 3);  // nothing more was asked
  api.stop();
}

}  // namespace dibs::test
