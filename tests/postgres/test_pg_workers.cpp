// Workers you can name and release, over PostgreSQL: lease holders, the operator's release (fenced:
// the released worker's late write is discarded, another worker completes the row once), and
// `dibs release` / `dibs status` as users run them (exit codes, --yes, the table's state).
#include "postgres/pg_env.hpp"
#include "support/worker_release.hpp"
#include "support/sql_release_case.hpp"
#include "support/sql_settings_case.hpp"

#include <adapters/postgres/pg_store.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("PostgreSQL lists lease holders and releases a worker's leases, fenced", "[postgres][workers]") {
  const auto table = test::unique_pg_table("workers");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  pg::pg_store s(o);
  s.reset_table();
  REQUIRE(s.seed(10, 3) == 10);
  test::check_worker_release(s);
  // Each released row was claimed twice (the released claim's attempt counted) and written once.
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE attempts = 2") == std::optional<std::string>("3"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL") == std::optional<std::string>("9"));
}

TEST_CASE("dibs release frees a dead worker's PostgreSQL leases with --yes, and dibs status shows the holders",
          "[postgres][workers][cli][e2e]") {
  const auto table = test::unique_pg_table("release");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  pg::pg_store s(o);
  test::check_release_cli(s, table, o.uri, "UPDATE " + table + " SET lock_until = now() - interval '30 seconds' WHERE lock_by = 'pod-a-1'");
}

TEST_CASE("PostgreSQL: after dibs init, status, enrich, retry and release need only --store", "[postgres][settings][cli][e2e]") {
  const auto table = test::unique_pg_table("settings");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  pg::pg_store s(o);  // the dibs table it makes is replaced by the user's own below
  s.execute("DROP TABLE IF EXISTS " + table);
  test::check_recorded_settings(s, o.uri,
                                {"CREATE TABLE " + table + " (id bigserial PRIMARY KEY, ip text NOT NULL, geo jsonb NULL)",
                                 "INSERT INTO " + table + " (ip) VALUES ('8.8.8.8'), ('1.1.1.1'), ('9.9.9.9')"});
}
