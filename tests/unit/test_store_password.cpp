// Where the store's password comes from when it is not on the command line
// (adapters/stores/store_password.hpp): the order, the conflicts, and the encoding.
#include <adapters/stores/store_password.hpp>

#include <dibs/setting_error.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace dibs;

TEST_CASE("a password from a file or the environment goes into a URI that has none", "[password][unit]") {
  password_sources s;
  s.dibs_env = "from-env";
  CHECK(with_store_password("mysql://app@127.0.0.1:3306/geo?table=t", s) == "mysql://app:from-env@127.0.0.1:3306/geo?table=t");
  CHECK(with_store_password("postgresql://app@h/db", s) == "postgresql://app:from-env@h/db");
  CHECK(with_store_password("mongodb://app@h1,h2/db?replicaSet=r", s) == "mongodb://app:from-env@h1,h2/db?replicaSet=r");
  s.file = "from-file";
  CHECK(with_store_password("mysql://app@h:3306/geo", s) == "mysql://app:from-file@h:3306/geo");
  // An empty password in the URI ("app:@") counts as none.
  CHECK(with_store_password("mysql://app:@h:3306/geo", s) == "mysql://app:from-file@h:3306/geo");
}

TEST_CASE("MYSQL_PWD is for mysql:// only, and yields to DIBS_STORE_PASSWORD", "[password][unit]") {
  password_sources s;
  s.mysql_env = "mysql-pwd";
  CHECK(with_store_password("mysql://app@h:3306/geo", s) == "mysql://app:mysql-pwd@h:3306/geo");
  CHECK(with_store_password("postgresql://app@h/db", s) == "postgresql://app@h/db");  // libpq's own then apply
  s.dibs_env = "dibs";
  CHECK(with_store_password("mysql://app@h:3306/geo", s) == "mysql://app:dibs@h:3306/geo");
}

TEST_CASE("the URI's own password wins over the environment, and conflicts with a file", "[password][unit]") {
  password_sources s;
  s.dibs_env = "env";
  s.mysql_env = "pwd";
  CHECK(with_store_password("mysql://app:inuri@h:3306/geo", s) == "mysql://app:inuri@h:3306/geo");
  s.file = "file";
  try {
    with_store_password("mysql://app:inuri@h:3306/geo", s);
    FAIL("a password in the URI and --password-file together were accepted");
  } catch (const setting_error& e) {
    CHECK(e.setting() == "password_file");
    CHECK_THAT(e.problem(), Catch::Contains("one place") && !Catch::Contains("inuri"));
  }
}

TEST_CASE("the password is percent-encoded into the URI and never shown in a refusal", "[password][unit]") {
  password_sources s;
  s.file = "p@ss/w:rd?#%";
  CHECK(with_store_password("mysql://app@h:3306/geo", s) == "mysql://app:p%40ss%2Fw%3Ard%3F%23%25@h:3306/geo");
  try {
    with_store_password("mongodb://h/db", s);  // no user
    FAIL("a password file without a user in the URI was accepted");
  } catch (const setting_error& e) {
    CHECK(e.setting() == "password_file");
    CHECK_THAT(e.problem(), Catch::Contains("USER@HOST") && !Catch::Contains("p@ss"));
  }
  // The environment's password is ambient: a URI without a user is left as it is.
  password_sources env;
  env.dibs_env = "x";
  CHECK(with_store_password("mongodb://h/db", env) == "mongodb://h/db");
  // A file store has no password.
  CHECK(with_store_password("jsonl:in.jsonl", env) == "jsonl:in.jsonl");
  CHECK_THROWS_AS(with_store_password("jsonl:in.jsonl", s), setting_error);
}

TEST_CASE("a password file's first line is the password, without its line end", "[password][unit]") {
  const std::string path = "/tmp/dibs-password-test-" + std::to_string(::getpid());
  std::ofstream(path) << "S3cret pass\r\nsecond line\n";
  CHECK(read_password_file(path) == "S3cret pass");
  std::ofstream(path) << "\n";
  CHECK_THROWS_AS(read_password_file(path), setting_error);
  std::remove(path.c_str());
  CHECK_THROWS_AS(read_password_file(path), setting_error);
}
