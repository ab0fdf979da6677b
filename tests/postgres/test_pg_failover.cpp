// A PostgreSQL primary with a streaming standby (tests/servers/postgres_pair_ctl.sh), the store
// named by libpq's multi-host URI with target_session_attrs=read-write: the primary killed
// (SIGKILL, every process of it) and the standby promoted while dibs enrich runs. The workers
// reconnect to the new primary on their own, the --follow listener LISTENs there again, every row
// ends done; with asynchronous replication the commits the standby had not received are lost with
// the primary -- a row's claim and its answer together, so it is pending again and done again (at
// least once, never lost); with a synchronous standby nothing acknowledged is lost, and no row is
// called twice.
#include "support/backend.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/server_env.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <regex>
#include <signal.h>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using steady = std::chrono::steady_clock;

void pair_ctl(const std::string& action, const std::string& mode = "") {
  std::vector<std::string> argv{DIBS_POSTGRES_PAIR_CTL, action, DIBS_SERVERS_DIR};
  if (!mode.empty()) argv.push_back(mode);
  test::child_process p(argv, true);
  std::string out;
  const int rc = p.finish(out);
  INFO(action << ": " << out);
  REQUIRE(rc == 0);
}

std::string file_uri(const std::string& name) {
  return test::server_uri("DIBS_NO_SUCH_VARIABLE", (std::string(DIBS_SERVERS_DIR) + "/" + name).c_str());
}

// One value by psql at `uri` (the real client, on one server of the pair); "" when it can't (a
// server that is down).
std::string psql(const std::string& uri, const std::string& sql) {
  test::child_process p({"psql", "-X", "-q", "-t", "-A", uri, "-c", sql}, true);
  std::string out;
  if (p.finish(out) != 0) return "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

long figure(const std::string& out, const std::string& name) {
  std::smatch m;
  return std::regex_search(out, m, std::regex("summary: .*\\b" + name + "=(\\d+)")) ? std::stol(m[1]) : -1;
}

std::unique_ptr<test::child_process> worker(const std::string& uri, const std::string& url, std::vector<std::string> more = {}) {
  std::vector<std::string> argv{test::dibs_binary(), "enrich", "--store", uri, "--url", url, "--no-progress",
                                "--no-preflight", "--lease", "20s", "--concurrency", "16"};
  argv.insert(argv.end(), more.begin(), more.end());
  return std::make_unique<test::child_process>(argv, true);
}

std::string done_count(const std::string& table) { return "SELECT count(*) FROM " + table + " WHERE location IS NOT NULL"; }
}  // namespace

TEST_CASE("PostgreSQL failover mid-run: the workers go on at the promoted standby, LISTEN again, every row done",
          "[postgres][failover]") {
  pair_ctl("start", "async");
  stub::ipapi_stub api(stub::stub_options::loopback(2ms));
  api.start();
  auto s = test::this_backend().fresh("failover");
  const auto& table = s.name;
  const std::size_t rows = 3000;
  REQUIRE(s.seed(rows, 11) == rows);
  const auto primary = file_uri("postgres_primary_uri"), standby = file_uri("postgres_standby_uri");
  const std::string url = api.base_url() + "/json/{originatingIp}";

  // Half the rows locked at the primary by a transaction that lives until the primary dies (it never
  // commits): the workers' SKIP LOCKED claims pass them over, so the kill comes mid-run however
  // fast the workers went through the other half (on a loaded machine the standby had every row
  // done before the kill, and the wait below for an answer written at the new primary could only
  // fail). The lock goes with the primary; at the promoted standby those rows are pending.
  const std::string locker = "dibs_failover_lock";
  const std::string locker_uri = primary + (primary.find('?') == std::string::npos ? "?" : "&") + "application_name=" + locker;
  test::child_process lock_holder({"psql", "-X", "-q", "-o", "/dev/null", locker_uri, "-c",
                                   "SELECT id FROM " + table + " WHERE id > (SELECT min(id) FROM " + table + ") + " +
                                       std::to_string(rows / 2 - 1) + " FOR UPDATE; SELECT pg_sleep(3600)"},
                                  true);
  REQUIRE(test::eventually([&] {
    return psql(primary, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + locker +
                             "' AND wait_event = 'PgSleep'") == "1";  // past its FOR UPDATE: the rows are locked
  }));
  std::vector<std::unique_ptr<test::child_process>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(worker(s.uri(), url, {"--follow", "--shards", "2"}));
  // Mid-run: a quarter done at the primary.
  REQUIRE(test::eventually([&] { return std::atol(psql(primary, done_count(table)).c_str()) >= static_cast<long>(rows / 4); }));
  const auto killed = steady::now();
  pair_ctl("kill-primary");
  // What the standby holds once the primary is gone (no more WAL can come): any answer beyond it
  // was written at the new primary.
  const auto before = psql(standby, done_count(table));
  REQUIRE_FALSE(before.empty());
  REQUIRE(std::atol(before.c_str()) <= static_cast<long>(rows / 2));  // none of the locked half
  pair_ctl("promote");
  const auto promoted = steady::now();
  REQUIRE(test::eventually([&] { return psql(standby, done_count(table)) != before; }, 60s, 5ms));
  const auto first_write = steady::now();
  auto ms = [&](steady::time_point t) { return std::chrono::duration_cast<std::chrono::milliseconds>(t - killed).count(); };
  std::cout << "failover: primary killed; standby promoted after " << ms(promoted) << " ms; first answer written at the new "
            << "primary " << ms(first_write) << " ms after the kill (" << before << " of " << rows << " rows done then)"
            << std::endl;

  CHECK(test::eventually([&] { return psql(standby, done_count(table)) == std::to_string(rows); }, 120s));
  // Each worker's listener LISTENs at the new primary, and new rows wake them.
  const std::string listening = "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN \"dibs_" + table + "\"'";
  CHECK(test::eventually([&] { return psql(standby, listening) == "3"; }));
  psql(standby, "INSERT INTO " + table + " (\"originatingIp\") VALUES ('8.8.8.8'), ('1.1.1.1'), ('9.9.9.9')");
  CHECK(test::eventually([&] { return psql(standby, done_count(table)) == std::to_string(rows + 3); }));

  long completed = 0;
  for (auto& w : workers) {
    w->signal(SIGTERM);
    std::string out;
    const int rc = w->finish(out);
    INFO(out);
    CHECK(rc == 0);
    CHECK_THAT(out, Catch::Contains("listening on dibs_" + table + " again"));
    completed += figure(out, "completed");
  }
  // At least once each: a row whose answer the standby had not received was done again.
  CHECK(completed >= static_cast<long>(rows + 3));
  CHECK(api.requests() >= rows + 3);
  CHECK(psql(standby, "SELECT count(*) FROM " + table + " WHERE location->>'query' IS DISTINCT FROM \"originatingIp\" "
                      "OR dibs_lock_token IS NOT NULL OR dibs_failed_at IS NOT NULL") == "0");
  pair_ctl("stop");
}

TEST_CASE("PostgreSQL asynchronous replication: answers the standby never received are lost at failover with their claims, "
          "and done again",
          "[postgres][failover]") {
  pair_ctl("start", "async");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = test::this_backend().fresh("redo");
  const auto& table = s.name;
  const std::size_t first = 200, last = 100;
  REQUIRE(s.seed(first, 5) == first);
  const auto standby = file_uri("postgres_standby_uri");
  // The standby a second behind in what it applies (as one under load is): a wait on what it
  // shows must name the state it waits for whole (200 done and 100 pending), or a moment of the
  // first run's (100 claimed, 100 not yet) passes for it.
  psql(standby, "ALTER SYSTEM SET recovery_min_apply_delay = '1s'");
  REQUIRE(psql(standby, "SELECT pg_reload_conf()") == "t");
  REQUIRE(test::eventually([&] { return psql(standby, "SHOW recovery_min_apply_delay") == "1s"; }));
  const std::string url = api.base_url() + "/json/{originatingIp}";
  auto drain = [&](long expect_completed) {
    std::string out;
    const int rc = worker(s.uri(), url)->finish(out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(figure(out, "completed") == expect_completed);
  };

  drain(first);  // streamed to the standby: these stay done
  psql(file_uri("postgres_primary_uri"), "INSERT INTO " + table + " (\"originatingIp\") SELECT '11.1.0.' || g FROM "
                                         "generate_series(1, " + std::to_string(last) + ") g");
  const std::string pending = "SELECT count(*) FROM " + table + " WHERE location IS NULL AND dibs_attempts = 0";
  // The whole state the primary holds: a count of pending rows alone also matched a moment of the
  // first run (its first claim of 100, at a standby behind), and the standby was stopped there.
  const std::string state = "SELECT count(*) FILTER (WHERE location IS NOT NULL) || ' done, ' || count(*) FILTER (WHERE "
                            "location IS NULL AND dibs_attempts = 0) || ' pending' FROM " + table;
  const auto whole = std::to_string(first) + " done, " + std::to_string(last) + " pending";
  REQUIRE(psql(file_uri("postgres_primary_uri"), state) == whole);
  REQUIRE(test::eventually([&] { return psql(standby, state) == whole; }));
  // The standby away (as a standby far behind is): what the primary acknowledges now reaches no one.
  pair_ctl("stop-standby");
  drain(last);
  CHECK(api.requests() == first + last);
  pair_ctl("kill-primary");
  pair_ctl("start-standby");
  pair_ctl("promote");
  // The last answers are gone, and their claims with them: pending, never attempted, no lease.
  CHECK(psql(standby, done_count(table)) == std::to_string(first));
  CHECK(psql(standby, pending) == std::to_string(last));
  drain(last);  // done again: each of them called a second time
  CHECK(api.requests() == first + 2 * last);
  CHECK(psql(standby, done_count(table)) == std::to_string(first + last));
  pair_ctl("stop");
}

TEST_CASE("PostgreSQL synchronous replication: at failover nothing done is done again", "[postgres][failover]") {
  pair_ctl("start", "sync");
  stub::ipapi_stub api(stub::stub_options::loopback(2ms));
  api.start();
  auto s = test::this_backend().fresh("syncfo");
  const auto& table = s.name;
  const std::size_t rows = 1500;
  REQUIRE(s.seed(rows, 13) == rows);
  const auto primary = file_uri("postgres_primary_uri"), standby = file_uri("postgres_standby_uri");
  const std::string url = api.base_url() + "/json/{originatingIp}";
  std::vector<std::unique_ptr<test::child_process>> workers;
  for (int i = 0; i < 2; ++i) workers.push_back(worker(s.uri(), url));
  REQUIRE(test::eventually([&] { return std::atol(psql(primary, done_count(table)).c_str()) >= static_cast<long>(rows / 3); }));
  pair_ctl("kill-primary");
  pair_ctl("promote");
  long completed = 0, lost = 0;
  for (auto& w : workers) {
    std::string out;
    const int rc = w->finish(out);
    INFO(out);
    CHECK(rc == 0);
    completed += figure(out, "completed");
    lost += figure(out, "lost_leases");
  }
  CHECK(psql(standby, done_count(table)) == std::to_string(rows));
  // Every row called once: no answer acknowledged to a worker was lost with the primary. (An answer
  // committed whose acknowledgement died with the primary is found written: a lost lease, not a redo.)
  CHECK(api.requests() == rows);
  CHECK(completed + lost == static_cast<long>(rows));
  pair_ctl("stop");
}

TEST_CASE("a PostgreSQL URI naming the standby first, without target_session_attrs: dibs writes at the primary",
          "[postgres][failover]") {
  // libpq alone takes the first server that answers: the standby, where every claim fails with
  // 25006 (read-only) for as long as the run lasts.
  pair_ctl("start", "async");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = test::this_backend().fresh("standbyfirst");
  REQUIRE(s.seed(200, 3) == 200);
  REQUIRE(test::eventually([&] { return psql(file_uri("postgres_standby_uri"), "SELECT count(*) FROM " + s.name) == "200"; }));
  auto port = [](const std::string& name) { return file_uri(name + ".port"); };
  const std::string uri = "postgresql://postgres@127.0.0.1:" + port("postgres_standby") + ",127.0.0.1:" + port("postgres_primary") +
                          "/dibs_test?table=" + s.name;
  auto [rc, out] = test::run_dibs_within(60s, {"enrich", "--store", uri, "--url", api.base_url() + "/json/{originatingIp}",
                                               "--no-progress", "--no-preflight"});
  INFO(out);
  CHECK(rc == 0);
  CHECK(figure(out, "completed") == 200);
  pair_ctl("stop");
}
