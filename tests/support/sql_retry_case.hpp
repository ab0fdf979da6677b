// `dibs retry` and `dibs status` over a SQL store (MariaDB, PostgreSQL) as users run them, the
// same on both: failed rows (the stub's private and invalid addresses) counted by reason, put back
// by reason and then all, attempts 0, and done by the next `dibs enrich`; done rows are never
// touched. `Store` is mysql_store or pg_store on `table`, which `uri` names; `source_sql` is the
// source column as that dialect writes it in SQL.
#pragma once

#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>

namespace dibs::test {

template <class Store>
void check_retry_by_reason(Store& s, const std::string& table, const std::string& uri, const std::string& source_sql) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  s.reset_table();
  REQUIRE(s.seed(200, 5) == 200);
  s.execute("INSERT INTO " + table + " (" + source_sql + ") VALUES ('192.168.7.1'), ('192.168.7.2'), ('192.168.7.3'), "
            "('nonsense'), ('nonsense')");
  const std::string url = api.base_url() + "/json/{originatingIp}";
  auto [rc, out] = run_dibs({"enrich", "--store", uri, "--url", url, "--no-progress", "--max-attempts", "1", "--no-data-fails"});
  INFO(out);
  REQUIRE(rc == 1);
  CHECK_THAT(out, Catch::Contains("store now: 200 done, 5 failed, 0 pending, 0 leased; this run: 200 done, 5 failed"));

  // status: the reasons, most frequent first, as text (the counts stay last) and as JSON.
  std::tie(rc, out) = run_dibs({"status", "--store", uri});
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("failed by reason (top 2):\n  3  the API has no data: private range  (e.g. "));
  CHECK_THAT(out, Catch::Contains("  2  the API has no data: invalid query  (e.g. "));
  CHECK(last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=200 failed=5");
  std::tie(rc, out) = run_dibs({"status", "--store", uri, "--json"});
  REQUIRE(rc == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(last_line(out)).get(doc));
  CHECK(uint64_t(doc["failed"]) == 5);
  CHECK(uint64_t(doc["done"]) == 200);
  CHECK(std::string_view(doc["failure_reasons"].at(0)["reason"]) == "the API has no data: private range");
  CHECK(uint64_t(doc["failure_reasons"].at(0)["count"]) == 3);
  CHECK(simdjson::dom::array(doc["failure_reasons"].at(0)["example_ids"]).size() == 2);
  CHECK(uint64_t(doc["failure_reasons"].at(1)["count"]) == 2);

  // --reason-is: the whole reason only, as status lists it (a part of it is not enough).
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--reason-is", "invalid query"});
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending in "));
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--reason-is", "invalid query", "--reason", "invalid"});
  CHECK(rc == 2);  // one or the other
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--reason-is", "the API has no data: private range"});
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 3 failed items back to pending in "));
  CHECK(s.stats_blocking().pending == 3);
  // (they fail again the same way, and count as failed below)
  std::tie(rc, out) = run_dibs({"enrich", "--store", uri, "--url", url, "--no-progress", "--max-attempts", "1", "--no-data-fails"});
  REQUIRE(rc == 1);

  // --reason: only the matching failures.
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--reason", "invalid query"});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 2 failed items back to pending in "));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE " + source_sql + " = 'nonsense' AND dibs_failed_at IS NULL AND "
                      "dibs_error IS NULL AND dibs_http_status IS NULL AND dibs_attempts = 0 AND dibs_lock_token IS NULL") ==
        std::optional<std::string>("2"));
  auto st = s.stats_blocking();
  CHECK(st.failed == 3);
  CHECK(st.pending == 2);
  CHECK(st.done == 200);

  // --since: a span or a moment; a failure older than the moment stays failed.
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--since", "2000-01-01T00:00:00Z", "--reason", "no such reason"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending"));
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--since", "yesterday"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--since: 'yesterday'"));

  // All the rest; a second retry finds nothing; done rows keep their answers.
  std::tie(rc, out) = run_dibs({"retry", "--store", uri, "--since", "1h"});
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 3 failed items back to pending"));
  std::tie(rc, out) = run_dibs({"retry", "--store", uri});
  CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending"));
  st = s.stats_blocking();
  CHECK(st.pending == 5);
  CHECK(st.failed == 0);
  CHECK(st.done == 200);
  CHECK(s.query_value("SELECT MAX(dibs_attempts) FROM " + table + " WHERE location IS NULL") == std::optional<std::string>("0"));

  // An API that answers them now finishes every one.
  std::tie(rc, out) = run_dibs({"enrich", "--store", uri, "--url", api.base_url() + "/json/8.8.8.8?ip={originatingIp}",
                                "--no-progress", "--max-attempts", "1", "--no-data-fails"});
  INFO(out);
  CHECK(rc == 0);
  CHECK(last_line(out).rfind("summary: completed=5 failed=0 ", 0) == 0);
  st = s.stats_blocking();
  CHECK(st.done == 205);
  CHECK(st.failed == 0);
  CHECK(st.drained());
}

}  // namespace dibs::test
