// What an operator runs on a SQL store (MariaDB, PostgreSQL), the same on both: workers named
// and released (fenced: the released worker's late write is discarded, another worker completes
// the row once), `dibs release` / `dibs status` / `dibs retry` as users run them (exit codes,
// --yes, the table's state), and the settings dibs init records. The cases themselves are in
// support/worker_release.hpp and support/sql_*_case.hpp.
#include "support/backend.hpp"
#include "support/sql_release_case.hpp"
#include "support/sql_retry_case.hpp"
#include "support/sql_settings_case.hpp"
#include "support/worker_release.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::db;
}  // namespace

BACKEND_TEST_CASE("lists lease holders and releases a worker's leases, fenced", "[workers]") {
  auto s = db.fresh("workers");
  REQUIRE(s.seed(10, 3) == 10);
  test::check_worker_release(*s.store);
  // Each released row was claimed twice (the released claim's attempt counted) and written once.
  CHECK(s.query_value("SELECT COUNT(*) FROM " + s.name + " WHERE dibs_attempts = 2") == std::optional<std::string>("3"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + s.name + " WHERE location IS NOT NULL") == std::optional<std::string>("9"));
}

BACKEND_TEST_CASE("dibs release frees a dead worker's leases with --yes, and dibs status shows the holders",
                  "[workers][cli][e2e]") {
  auto s = db.open(db.unique_name("release"));
  test::check_release_cli(s, s.name, s.uri(),
                          "UPDATE " + s.name + " SET dibs_lock_until = " + db.sql_of().thirty_s_ago + " WHERE dibs_lock_by = 'pod-a-1'");
}

BACKEND_TEST_CASE("after dibs init, status, enrich, retry and release need only --store", "[settings][cli][e2e]") {
  auto s = db.open(db.unique_name("settings"));  // the dibs table it makes is replaced by the user's own below
  s.execute("DROP TABLE IF EXISTS " + s.name);
  test::check_recorded_settings(s, s.uri(),
                                {"CREATE TABLE " + s.name + " " + db.sql_of().user_geo_table,
                                 "INSERT INTO " + s.name + " (ip) VALUES ('8.8.8.8'), ('1.1.1.1'), ('9.9.9.9')"});
}

BACKEND_TEST_CASE("dibs retry puts failed rows back by reason, attempts 0, and enrich finishes them",
                  "[retry][status][e2e]") {
  auto s = db.open(db.unique_name("retry"));
  test::check_retry_by_reason(s, s.name, s.uri(), db.sql_of().source_column);
}
