// The CLI as a user runs it, with secrets in --store: whatever goes wrong, neither stdout nor
// stderr shows them.
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace {
// `dibs status --store URI`: its exit status and everything it printed (stdout and stderr).
int dibs_status(const std::string& uri, std::string& out) {
  dibs::test::child_process p({dibs::test::dibs_binary(), "status", "--store", uri}, /*merge_stderr=*/true);
  return p.finish(out);
}
}  // namespace

TEST_CASE("dibs status prints no secret of an unreachable MongoDB's URI options", "[cli][secrets]") {
  std::string out;
  const int rc = dibs_status(
      "mongodb://127.0.0.1:1/?tlsCertificateKeyFilePassword=S3cret&authMechanismProperties=AWS_SESSION_TOKEN:T0ken"
      "&serverSelectionTimeoutMS=200",
      out);
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("MongoDB"));  // it does say what failed
  CHECK(out.find("S3cret") == std::string::npos);
  CHECK(out.find("T0ken") == std::string::npos);
}

TEST_CASE("dibs status prints no password of a MySQL URI missing its '@'", "[cli][secrets]") {
  std::string out;
  const int rc = dibs_status("mysql://app:S3cretPW/db", out);
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("port"));
  CHECK(out.find("S3cretPW") == std::string::npos);
}
