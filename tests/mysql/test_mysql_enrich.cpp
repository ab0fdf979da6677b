// `dibs enrich` over MariaDB as users run it: to the end, two --follow consumers with a producer,
// and a database restart in the middle of a run.
#include "support/eventually.hpp"
#include "support/backend.hpp"
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// Waits for a state of the table (not for a time): polls its counts, bounded.
std::uint64_t wait_done(test::backend_table& s, std::uint64_t n, std::chrono::seconds limit = 120s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (s.stats_blocking().done < n && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(50ms);
  return s.stats_blocking().done;
}
}  // namespace

TEST_CASE("two dibs enrich --follow consumers drain what a producer inserts, each row once", "[mysql][enrich][follow]") {
  stub::ipapi_stub api(stub::stub_options::loopback(2ms));
  api.start();
  auto s = test::this_backend().fresh("follow");
  const auto& uri = s.uri();

  // Each consumer's log goes to a file of its own: it has taken over its signals once it says
  // which worker it is (a SIGTERM before that would end it as the default action does).
  std::vector<std::string> logs;
  auto consumer = [&] {
    logs.push_back("/tmp/dibs-follow-" + std::to_string(::getpid()) + "-" + std::to_string(logs.size()) + ".log");
    std::remove(logs.back().c_str());
    return std::make_unique<test::child_process>(
        std::vector<std::string>{
            dibs::test::dibs_binary(), "enrich", "--follow", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
            "--concurrency", "100", "--claim-batch", "20", "--no-progress", "--log-level", "info",
            "--no-preflight"},  // whether rows are there yet when a consumer starts is a race: count only the rows' requests
        false, logs.back());
  };
  auto started = [](const std::string& log) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str().find(": leases taken as ") != std::string::npos;
  };
  auto a = consumer();
  auto b = consumer();
  REQUIRE(test::eventually([&] { return started(logs[0]) && started(logs[1]); }));
  std::uint64_t produced = 0;
  for (int round = 0; round < 10; ++round) {  // the producer: 10 bursts of 300 rows
    produced += s.seed(300, 100 + round);
    std::this_thread::sleep_for(20ms);      // spacing between bursts, not synchronization
  }
  CHECK(wait_done(s, produced) == produced);
  a->signal(SIGTERM);
  b->signal(SIGTERM);
  std::string out_a, out_b;
  CHECK(a->finish(out_a) == 0);
  CHECK(b->finish(out_b) == 0);
  INFO(out_a << "\n" << out_b);
  for (const auto& log : logs) std::remove(log.c_str());
  auto completed = [](const std::string& out) {
    const auto line = test::last_line(out);
    const auto at = line.find("completed=");
    return at == std::string::npos ? 0ull : std::stoull(line.substr(at + 10));
  };
  const auto ca = completed(out_a), cb = completed(out_b);
  CHECK(ca + cb == produced);  // every row written once, by one consumer or the other
  CHECK(api.requests() == produced);
  auto st = s.stats_blocking();
  CHECK(st.done == produced);
  CHECK(st.leased_live + st.leased_expired == 0);
}

TEST_CASE("a MariaDB restart in the middle of a run only delays it", "[mysql][enrich][restart]") {
  if (std::getenv("MYSQL_URI")) test::skip("MYSQL_URI names someone else's server: it is not restarted");
  stub::ipapi_stub api(stub::stub_options::loopback(5ms));
  api.start();
  auto s = test::this_backend().fresh("restart");
  const auto& table = s.name;
  const auto& uri = s.uri();
  REQUIRE(s.seed(4000, 9) == 4000);
  // Every write of an answer, identical or not, is recorded: a second write can't hide.
  s.execute("CREATE TABLE " + table + "_writes (id BIGINT UNSIGNED NOT NULL)");
  s.execute("CREATE TRIGGER " + table + "_audit AFTER UPDATE ON " + table + " FOR EACH ROW BEGIN " +
            "IF NEW.location IS NOT NULL THEN INSERT INTO " + table + "_writes VALUES (NEW.id); END IF; END");

  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                           "--concurrency", "50", "--no-progress"});
  REQUIRE(wait_done(s, 500) >= 500);
  test::restart_mariadb();
  std::string out;
  const int rc = run.finish(out);
  INFO(out);
  CHECK(rc == 0);
  auto st = s.stats_blocking();
  CHECK(st.done == 4000);
  CHECK(st.drained());
  // A COMMIT whose answer was lost in the restart is reported as a lost lease, never as a
  // second write: each row holds its own answer, written exactly once.
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) = originatingIp") ==
        std::optional<std::string>("4000"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + "_writes") == std::optional<std::string>("4000"));
  CHECK(s.query_value("SELECT COUNT(DISTINCT id) FROM " + table + "_writes") == std::optional<std::string>("4000"));
}
