// Ctrl-C while the database is down: the run still ends with its summary (the store's counts are
// tried once and said to be out of reach), not stuck waiting for a server that is gone.
#include "chaos/tcp_proxy.hpp"
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <dibs/stores/store_uri.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

TEST_CASE("SIGINT while the database is down still prints the summary", "[mysql][enrich][signals]") {
  stub::ipapi_stub api(stub::stub_options::loopback(5ms));
  api.start();
  auto s = test::this_backend().fresh("sigdown");
  REQUIRE(s.seed(3000, 11) == 3000);
  // dibs reaches the database through a proxy; ending the proxy is the database going away
  // (its connections cut, new ones refused), without stopping the server other tests share.
  const auto where = parse_store_uri(s.uri());
  auto proxy = std::make_unique<test::tcp_proxy>(where.host, where.port);
  const auto via = where.with_hosts("127.0.0.1:" + std::to_string(proxy->port()));
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", via, "--url", api.base_url() + "/json/{originatingIp}",
                           "--concurrency", "20", "--no-progress", "--shutdown-timeout", "1s"},
                          true);
  // Until the run is well under way (a state of the table, not a time).
  for (int i = 0; i < 2400 && s.stats_blocking().done < 200; ++i) std::this_thread::sleep_for(50ms);
  REQUIRE(s.stats_blocking().done >= 200);
  proxy.reset();
  run.signal(SIGINT);
  std::string out;
  const int rc = run.finish(out);
  INFO(out);
  CHECK(rc == 130);
  CHECK_THAT(out, Catch::Contains("the store's counts can't be read now"));
  CHECK(test::last_line(out).rfind("summary: completed=", 0) == 0);
}
