// A MariaDB server of its own that writes its binary log as statements (binlog_format=STATEMENT):
// it refuses every InnoDB write made at READ COMMITTED, so dibs keeps such sessions at REPEATABLE
// READ, and seed, enrich and status work there as anywhere (before, every statement was refused
// and enrich retried its claims forever).
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/skip.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
struct statement_logging_server {
  std::string dir = "/tmp/dibs-stmt-binlog-" + std::to_string(::getpid());
  std::string uri;
  statement_logging_server() {
    const std::string start = "rm -rf '" + dir + "' && MYSQL_URI= MARIADB_EXTRA_ARGS='--log-bin=" + dir +
                              "/binlog --binlog-format=STATEMENT --server-id=7' exec \"$0\" start '" + dir + "'";
    test::child_process p({"sh", "-c", start, DIBS_MARIADB_CTL}, true);
    std::string out;
    if (p.finish(out) != 0) throw std::runtime_error("could not start MariaDB with a statement binary log: " + out);
    std::ifstream in(dir + "/mysql_uri");
    std::getline(in, uri);
  }
  ~statement_logging_server() {
    test::child_process p({DIBS_MARIADB_CTL, "stop", dir}, true);
    std::string out;
    p.finish(out);
    std::system(("rm -rf '" + dir + "'").c_str());
  }
};
}  // namespace

TEST_CASE("dibs works on a MariaDB that writes its binary log as statements", "[mysql][binlog]") {
  if (std::getenv("MYSQL_URI")) test::skip("MYSQL_URI names someone else's server: this test starts its own");
  statement_logging_server server;
  REQUIRE_FALSE(server.uri.empty());
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto uri = server.uri + "?table=jobs";
  auto [rc, out] = test::run_dibs({"seed", "--store", uri, "--docs", "40"});
  INFO(out);
  REQUIRE(rc == 0);
  test::child_process enrich({test::dibs_binary(), "enrich", "--store", uri, "--url",
                              api.base_url() + "/json/{originatingIp}", "--no-progress", "--log-level", "info"},
                             true);
  // What this guards against is a run that never ends: bounded, so a hang fails here (and the
  // server is stopped) rather than at ctest's timeout.
  REQUIRE(test::eventually([&] { return !enrich.running(); }, 120s));
  out.clear();
  rc = enrich.finish(out);
  CHECK(rc == 0);  // seed draws public addresses: every one done, nothing refused by the server
  CHECK_THAT(out, Catch::Contains("binlog_format=STATEMENT): sessions stay at REPEATABLE READ"));
  CHECK_THAT(out, !Catch::Contains("impossible to write to binary log"));
  std::tie(rc, out) = test::run_dibs({"status", "--store", uri});
  CHECK(rc == 0);
  CHECK(test::last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=40 failed=0");
}
