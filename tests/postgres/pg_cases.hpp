// What the PostgreSQL tests give the shared SQL cases (tests/support/sql_*_case.hpp): the
// dialect, and a store to run their DDL and queries on (any table of the test database).
#pragma once

#include "postgres/pg_env.hpp"
#include "support/sql_key_case.hpp"

#include <adapters/postgres/pg_store.hpp>

namespace dibs::test {

inline pg::pg_store& postgres_admin() {
  static pg::pg_store s([] {
    pg::pg_options o;
    o.uri = postgres_uri_for("cases_admin");
    return o;
  }());
  return s;
}

inline sql_dialect postgres_dialect() {
  return {[](const std::string& table) { return postgres_uri_for(table); }, "geo->>'query' = ip",
          [](const std::string& sql) { postgres_admin().execute(sql); },
          [](const std::string& select) { return postgres_admin().query_value(select); }};
}

}  // namespace dibs::test
