// The store password given where `ps` can't see it (adapters/stores/store_password.hpp), as it
// reaches the server: the real `dibs` against a MySQL-protocol listener that checks the proof
// of the password in the handshake (support/fake_mysql_auth.hpp; the fixture's MariaDB runs
// with --skip-grant-tables, where any password would pass).
#include "support/fake_mysql_auth.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {
struct password_ran {
  int rc;
  std::string out;
};

// `dibs ARGS` with exactly the environment `env` adds (MYSQL_PWD and DIBS_STORE_PASSWORD unset first).
password_ran dibs_with(const std::string& env, const std::vector<std::string>& args) {
  std::string cmd = "unset MYSQL_PWD DIBS_STORE_PASSWORD; " + env + " " + dibs::test::shell_quote(dibs::test::dibs_binary());
  for (const auto& a : args) cmd += " " + dibs::test::shell_quote(a);
  dibs::test::child_process p({"bash", "-c", cmd + " 2>&1"});
  password_ran r{};
  r.rc = p.finish(r.out);
  return r;
}
}  // namespace

TEST_CASE("the MySQL password from --password-file, DIBS_STORE_PASSWORD or MYSQL_PWD reaches the server",
          "[cli][password]") {
  const std::string password = "S3cret/with@odd:chars";
  dibs::test::fake_mysql_auth server(password);
  const std::string uri = "mysql://app@127.0.0.1:" + std::to_string(server.port()) + "/geo?table=jobs";
  const auto dir = fs::temp_directory_path() / ("dibs-cli-pw-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto file = (dir / "password").string();
  std::ofstream(file) << password << "\n";
  const std::vector<std::string> status{"status", "--store", uri, "--db-threads", "1"};

  // None given: the server sees no proof of it (and dibs says the server refused, exit 2).
  auto r = dibs_with("", status);
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK(server.last_verdict() == 0);
  CHECK(server.last_user() == "app");

  auto with_file = status;
  with_file.insert(with_file.end(), {"--password-file", file});
  server.reset();
  r = dibs_with("", with_file);
  INFO(r.out);
  CHECK(server.last_verdict() == 1);
  CHECK(r.out.find(password) == std::string::npos);

  server.reset();
  r = dibs_with("DIBS_STORE_PASSWORD=" + dibs::test::shell_quote(password), status);
  INFO(r.out);
  CHECK(server.last_verdict() == 1);

  server.reset();
  r = dibs_with("MYSQL_PWD=" + dibs::test::shell_quote(password), status);
  INFO(r.out);
  CHECK(server.last_verdict() == 1);

  // DIBS_STORE_PASSWORD before MYSQL_PWD; the URI's own before either.
  server.reset();
  r = dibs_with("MYSQL_PWD=wrong DIBS_STORE_PASSWORD=" + dibs::test::shell_quote(password), status);
  CHECK(server.last_verdict() == 1);
  server.reset();
  r = dibs_with("DIBS_STORE_PASSWORD=wrong",
                {"status", "--store", "mysql://app:S3cret%2Fwith%40odd%3Achars@127.0.0.1:" + std::to_string(server.port()) +
                                          "/geo?table=jobs", "--db-threads", "1"});
  CHECK(server.last_verdict() == 1);

  // A password in the URI and a file: one place only, refused before connecting.
  server.reset();
  r = dibs_with("", {"status", "--store", "mysql://app:other@127.0.0.1:" + std::to_string(server.port()) + "/geo",
                     "--password-file", file});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error: --password-file and a password in --store") &&
                        Catch::Contains("one place"));
  CHECK(r.out.find("other") == std::string::npos);
  CHECK(server.last_verdict() == -1);
  fs::remove_all(dir);
}
