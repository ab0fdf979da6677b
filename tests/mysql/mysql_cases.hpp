// What the MariaDB tests give the shared SQL cases (tests/support/sql_*_case.hpp): the dialect,
// and a store to run their DDL and queries on (any table of the test database).
#pragma once

#include "support/mysql_env.hpp"
#include "support/sql_key_case.hpp"

#include <dibs/stores/mysql_store.hpp>

namespace dibs::test {

inline sql::mysql_store& mariadb_admin() {
  static sql::mysql_store s([] {
    sql::mysql_options o;
    o.uri = mysql_uri_for("cases_admin");
    return o;
  }());
  return s;
}

inline sql_dialect mariadb_dialect() {
  return {[](const std::string& table) { return mysql_uri_for(table); }, "JSON_UNQUOTE(JSON_EXTRACT(geo, '$.query')) = ip",
          [](const std::string& sql) { mariadb_admin().execute(sql); },
          [](const std::string& select) { return mariadb_admin().query_value(select); }};
}

}  // namespace dibs::test
