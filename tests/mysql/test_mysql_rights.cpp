// MariaDB users without the rights dibs needs (tests/support/sql_rights_case.hpp). The test
// server runs without grant checks (--skip-grant-tables); FLUSH PRIVILEGES turns them on, for
// this test's users, and the server is restarted afterwards as it was.
#include "support/mysql_env.hpp"
#include "support/skip.hpp"
#include "support/sql_rights_case.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace dibs;

namespace {
sql::mysql_store& mariadb_admin() {
  static sql::mysql_store s([] {
    sql::mysql_options o;
    o.uri = test::mysql_uri_for("cases_admin");
    return o;
  }());
  return s;
}

// Grant checks on for as long as it lives; the server restarted without them after.
struct grant_checks {
  sql::mysql_store& admin;
  explicit grant_checks(sql::mysql_store& s) : admin(s) { admin.execute("FLUSH PRIVILEGES"); }
  ~grant_checks() {
    try {
      test::restart_mariadb();
    } catch (const std::exception& e) {
      WARN("restarting MariaDB failed: " << e.what());
    }
  }
};

test::rights_setup rights_of(sql::mysql_store& admin, const std::string& table, const std::string& user) {
  admin.execute("DROP USER IF EXISTS '" + user + "'@'%'");
  admin.execute("CREATE USER '" + user + "'@'%'");
  const auto owner = test::mysql_uri_for(table);
  auto as_user = owner;
  as_user.replace(as_user.find("://") + 3, as_user.find('@') - as_user.find("://") - 3, user);
  return {owner, as_user,
          [&admin, table, user](const std::string& rights) {
            admin.execute("GRANT " + rights + " ON " + table + " TO '" + user + "'@'%'");
          },
          [&admin, table, user](const std::string& right) {
            admin.execute("REVOKE " + right + " ON " + table + " FROM '" + user + "'@'%'");
          },
          "GRANT "};
}
}  // namespace

TEST_CASE("a MariaDB user who may not write is refused at start, and one who loses a right mid-run ends it",
          "[mysql][rights]") {
  if (std::getenv("MYSQL_URI")) test::skip("MYSQL_URI names someone else's server: this test turns its grant checks on");
  auto& admin = mariadb_admin();
  grant_checks on(admin);
  SECTION("at start") {
    const auto table = test::unique_table("rights_start");
    test::check_rights_at_start(rights_of(admin, table, "dibs_reader"));
  }
  SECTION("mid-run") {
    const auto table = test::unique_table("rights_lost");
    test::check_right_lost_mid_run(rights_of(admin, table, "dibs_writer"), [&] {
      return admin.query_value("SELECT COUNT(*) FROM " + table + " WHERE dibs_lock_token IS NOT NULL").value_or("?");
    });
  }
}
