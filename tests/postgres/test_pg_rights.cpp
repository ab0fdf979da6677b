// PostgreSQL roles without the rights dibs needs (tests/support/sql_rights_case.hpp): a role
// that may only read is refused at start, one that loses a right mid-run ends the run.
#include "postgres/pg_env.hpp"
#include "support/backend.hpp"
#include "support/sql_rights_case.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace dibs;

namespace {
const auto rights_sql = test::this_backend().dialect();

// A new login role (trust authentication: no password) and a table of the owner's, made by `dibs seed`.
struct role_and_table {
  std::string table, role;
  test::rights_setup rights;
  role_and_table(const std::string& prefix, const std::string& role_prefix)
      : table(test::unique_pg_table(prefix)), role(role_prefix + "_" + std::to_string(::getpid())) {
    rights_sql.execute("DROP ROLE IF EXISTS " + role + "; CREATE ROLE " + role + " LOGIN");
    auto as_role = test::postgres_uri_for(table);
    as_role.replace(as_role.find("://") + 3, as_role.find('@') - as_role.find("://") - 3, role);
    rights = {test::postgres_uri_for(table), as_role,
              [t = table, r = role](const std::string& rights) { rights_sql.execute("GRANT " + rights + " ON " + t + " TO " + r); },
              [t = table, r = role](const std::string& right) { rights_sql.execute("REVOKE " + right + " ON " + t + " FROM " + r); },
              "GRANT "};
  }
  ~role_and_table() {
    rights_sql.execute("DROP TABLE IF EXISTS " + table);
    rights_sql.execute("DROP ROLE IF EXISTS " + role);
  }
};
}  // namespace

TEST_CASE("a PostgreSQL role that may not write is refused at start", "[postgres][rights]") {
  role_and_table t("rights_start", "dibs_reader");
  test::check_rights_at_start(t.rights);
}

TEST_CASE("a PostgreSQL role that loses a right mid-run ends the run, its leases given back", "[postgres][rights]") {
  role_and_table t("rights_lost", "dibs_writer");
  test::check_right_lost_mid_run(t.rights, [&] {
    return rights_sql.query_value("SELECT count(*) FROM " + t.table + " WHERE dibs_lock_token IS NOT NULL").value_or("?");
  });
}
