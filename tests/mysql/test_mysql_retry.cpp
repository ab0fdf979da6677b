// `dibs retry` and `dibs status` over MariaDB as users run them (support/sql_retry_case.hpp).
#include "support/mysql_env.hpp"
#include "support/sql_retry_case.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("dibs retry puts MariaDB's failed rows back by reason, attempts 0, and enrich finishes them",
          "[mysql][retry][status][e2e]") {
  const auto table = test::unique_table("retry");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);
  test::check_retry_by_reason(s, table, o.uri, "originatingIp");
}
