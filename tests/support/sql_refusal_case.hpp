// A store that refuses writes, the same on every SQL store, through the real `dibs enrich`:
//   - a row the store refuses to delete (a foreign key of the user's points at it) costs that row
//     only: it is failed with the store's own reason, every other row of its batch is deleted,
//     and the run ends;
//   - a store that refuses for a reason dibs does not know (a trigger that breaks) is an outage:
//     written to at the backoff's pace, not thousands of times a second.
// The dialect's statements come in whole (sql_dialect: sql_key_case.hpp).
#pragma once

#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/sql_key_case.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

namespace dibs::test {

// `refer`: makes a table of the user's whose foreign key points at the row `id` (a literal);
// `reason`: what the store says of such a delete, in part.
inline void check_referenced_row_fails_alone(const sql_dialect& s, const std::string& table,
                                      const std::function<void(const std::string& id)>& refer, const std::string& reason) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto uri = s.uri_for(table);
  auto [rc, out] = run_dibs({"seed", "--store", uri, "--docs", "10"});
  REQUIRE(rc == 0);
  const auto referenced = s.query_value("SELECT MIN(id) + 3 FROM " + table);
  REQUIRE(referenced);
  refer(*referenced);
  std::tie(rc, out) = run_dibs_within(std::chrono::seconds(60),
                                      {"enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                                       "--no-progress", "--on-done", "delete", "--claim-batch", "10", "--shards", "1"});
  INFO(out);
  CHECK(rc == 1);  // one item failed; the run ended by itself
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table) == std::optional<std::string>("1"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE id = " + *referenced + " AND dibs_failed_at IS NOT NULL") ==
        std::optional<std::string>("1"));
  const auto error = s.query_value("SELECT dibs_error FROM " + table);
  REQUIRE(error);
  CHECK_THAT(*error, Catch::Contains(reason));
  CHECK_THAT(out, !Catch::Contains("retrying"));
}

// `break_writes`: makes every write of a row of `table` fail for a reason dibs does not know.
// The run is stopped after `window` (SIGTERM); each failed write is one warning.
inline void check_refusing_store_paced(const sql_dialect& s, const std::string& table,
                                const std::function<void()>& break_writes) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto uri = s.uri_for(table);
  auto [rc, out] = run_dibs({"seed", "--store", uri, "--docs", "20"});
  REQUIRE(rc == 0);
  break_writes();
  const auto window = std::chrono::seconds(3);
  std::tie(rc, out) = run_dibs_within(window,
                                      {"enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                                       "--no-progress", "--on-done", "delete", "--shutdown-timeout", "1s"},
                                      "TERM");
  INFO(out.substr(0, 4000));
  std::size_t failed_writes = 0;
  for (auto at = out.find("writing completions failed"); at != std::string::npos;
       at = out.find("writing completions failed", at + 1))
    ++failed_writes;
  CHECK(failed_writes >= 1);  // it did meet the refusing store
  // The flusher's backoff (50 ms doubling to 2 s) allows about 8 writes in 3 s, and the final
  // attempts at shutdown 5 more; without it, writes went out thousands of times a second.
  CHECK(failed_writes <= 30);
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table) == std::optional<std::string>("20"));  // nothing deleted
}

}  // namespace dibs::test
