// The MariaDB password given where `ps` can't see it: --password-file, DIBS_STORE_PASSWORD and
// MYSQL_PWD (adapters/stores/store_password.hpp), against a user the test creates with a password.
#include "support/mysql_env.hpp"
#include "support/process.hpp"

#include <adapters/mysql/mysql_store.hpp>
#include <adapters/demo_api/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace dibs;
namespace fs = std::filesystem;

namespace {
// The fixture's URI with another user (and no password) in it.
std::string as_user(const std::string& uri, const std::string& user) {
  const auto start = uri.find("://") + 3;
  const auto at = uri.find('@', start);
  return uri.substr(0, start) + user + (at == std::string::npos ? "@" + uri.substr(start) : uri.substr(at));
}

struct ran {
  int rc;
  std::string out;
};

ran shell(const std::string& env, const std::vector<std::string>& args) {
  std::string cmd = env + " " + test::shell_quote(DIBS_BIN_PATH);
  for (const auto& a : args) cmd += " " + test::shell_quote(a);
  test::child_process p({"bash", "-c", "unset MYSQL_PWD DIBS_STORE_PASSWORD; " + cmd + " 2>&1"});
  ran r{};
  r.rc = p.finish(r.out);
  return r;
}
}  // namespace

TEST_CASE("a MariaDB password from --password-file, DIBS_STORE_PASSWORD or MYSQL_PWD, never on the command line",
          "[mysql][password][e2e]") {
  const auto table = test::unique_table("pw");
  const auto root_uri = test::mysql_uri_for(table);
  sql::mysql_options o;
  o.uri = root_uri;
  sql::mysql_store root(o);
  root.reset_table();
  const std::string user = "dibs_pw_" + std::to_string(::getpid());
  const std::string password = "S3cret/with@odd:chars";
  const auto db = root.query_value("SELECT DATABASE()").value_or("");
  REQUIRE(!db.empty());
  for (const char* host : {"%", "localhost", "127.0.0.1"}) {
    root.execute("DROP USER IF EXISTS '" + user + "'@'" + host + "'");
    root.execute("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY '" + password + "'");
    root.execute("GRANT ALL ON `" + db + "`.* TO '" + user + "'@'" + host + "'");
  }
  const auto uri = as_user(root_uri, user);
  const auto dir = fs::temp_directory_path() / ("dibs-mysql-pw-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto file = (dir / "password").string();
  std::ofstream(file) << password << "\n";

  // Without it: refused by the server, exit 2, and nothing of the password shown.
  auto r = shell("", {"seed", "--store", uri, "--docs", "5"});
  INFO(r.out);
  CHECK(r.rc == 2);

  r = shell("", {"seed", "--store", uri, "--docs", "20", "--password-file", file});
  INFO(r.out);
  CHECK(r.rc == 0);

  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  r = shell("DIBS_STORE_PASSWORD=" + test::shell_quote(password),
            {"enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}", "--no-progress"});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK(r.out.find(password) == std::string::npos);
  CHECK(root.stats_blocking().done == 20);

  r = shell("MYSQL_PWD=" + test::shell_quote(password), {"status", "--store", uri});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("done=20"));

  // A password in the URI and a file: one place only.
  r = shell("", {"status", "--store", as_user(root_uri, user + ":wrong"), "--password-file", file});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("--password-file and a password in --store") && Catch::Contains("one place"));
  CHECK(r.out.find("wrong") == std::string::npos);

  for (const char* host : {"%", "localhost", "127.0.0.1"}) root.execute("DROP USER IF EXISTS '" + user + "'@'" + host + "'");
  fs::remove_all(dir);
  api.stop();
}
