// `dibs retry` and `dibs status` over PostgreSQL as users run them (support/sql_retry_case.hpp).
#include "postgres/pg_env.hpp"
#include "support/sql_retry_case.hpp"

#include <adapters/postgres/pg_store.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("dibs retry puts PostgreSQL's failed rows back by reason, attempts 0, and enrich finishes them",
          "[postgres][retry][status][e2e]") {
  const auto table = test::unique_pg_table("retry");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  pg::pg_store s(o);
  test::check_retry_by_reason(s, table, o.uri, "\"originatingIp\"");
}
