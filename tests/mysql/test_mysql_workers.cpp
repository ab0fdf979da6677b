// Workers you can name and release, over MariaDB: lease holders, the operator's release (fenced:
// the released worker's late write is discarded, another worker completes the row once), and
// `dibs release` / `dibs status` as users run them (exit codes, --yes, the table's state).
#include "support/mysql_env.hpp"
#include "support/worker_release.hpp"
#include "support/sql_release_case.hpp"
#include "support/sql_settings_case.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

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
  const auto table = test::unique_table("release");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);
  test::check_release_cli(s, table, o.uri, "UPDATE " + table + " SET lock_until = NOW(6) - INTERVAL 30 SECOND WHERE lock_by = 'pod-a-1'");
}

TEST_CASE("MariaDB: after dibs init, status, enrich, retry and release need only --store", "[mysql][settings][cli][e2e]") {
  const auto table = test::unique_table("settings");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);  // the dibs table it makes is replaced by the user's own below
  s.execute("DROP TABLE IF EXISTS " + table);
  test::check_recorded_settings(s, o.uri,
                                {"CREATE TABLE " + table +
                                     " (id BIGINT AUTO_INCREMENT PRIMARY KEY, ip VARCHAR(45) NOT NULL, geo JSON NULL)",
                                 "INSERT INTO " + table + " (ip) VALUES ('8.8.8.8'), ('1.1.1.1'), ('9.9.9.9')"});
}
