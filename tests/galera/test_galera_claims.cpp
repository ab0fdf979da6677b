// Claims and fenced writes on a three-node Galera cluster, where SKIP LOCKED sees only the
// local node's locks and two nodes that write the same row learn it when the later one is
// applied: a claim that loses its rows is a claim conflict (counted, run again, never a store
// error, never a call for a row another node holds), and a final write whose lease another node
// took meanwhile is refused (reported lost), never written. Each race is set up with a gate
// (galera_gate.hpp), not left to timing.
#include "galera/galera_gate.hpp"
#include "http_servers/small_api.hpp"
#include "support/raw_http.hpp"
#include "support/run_dibs.hpp"
#include "support/server_env.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <future>
#include <regex>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
std::shared_ptr<sql::mysql_store> store_on_node1(const std::string& table) {
  sql::mysql_options o;
  o.uri = test::with_table(test::galera_node_uri(1), table);
  o.threads = 1;
  return std::make_shared<sql::mysql_store>(o);
}

// Node 2 has the rows node 1 wrote (its applier runs a little behind).
void wait_for_rows_on_node2(chaos::sql_session& node2, const std::string& table, std::uint64_t rows) {
  REQUIRE(test::eventually([&] { return node2.number("SELECT COUNT(*) FROM " + table) == rows; }));
}

// Node 2 leases the table's rows to a worker of its own (as its dibs would), committed at once.
void node2_takes(chaos::sql_session& node2, const std::string& table) {
  node2.execute("UPDATE " + table +
                " SET dibs_lock_by = 'on-node-2', dibs_lock_token = 42, dibs_lock_until = NOW(6) + INTERVAL 1 HOUR, "
                "dibs_attempts = dibs_attempts + 1");
}
}  // namespace

TEST_CASE("Galera: a claim that loses its row to another node is a claim conflict, run again, and hands out nothing",
          "[galera][claim]") {
  const auto table = test::unique_table("galera_cert");
  auto store = store_on_node1(table);
  REQUIRE(store->seed(1, 7) == 1);
  test::galera_gate gate(table);
  chaos::sql_session node2(test::galera_node_uri(2), 0);
  wait_for_rows_on_node2(node2, table, 1);

  gate.close();
  auto claimed = std::async(std::launch::async, [&] { return store->claim_blocking(claim_request{5, "on-node-1", 60s, 5s}); });
  const bool waits = gate.someone_waits();  // the claim holds the row, inside its UPDATE
  if (!waits) gate.open();                  // (so that the claim ends, and the test with it)
  REQUIRE(waits);
  node2_takes(node2, table);
  const bool ended = claimed.wait_for(60s) == std::future_status::ready;
  gate.open();
  REQUIRE(ended);  // aborted by node 2's write, not by the gate opening
  const auto got = claimed.get();
  CHECK(got.empty());  // the row is node 2's worker's: the claim run again found nothing claimable
  // At least one: on a loaded machine the claim run again can meet node 2's write-set a second
  // time before it is applied here (seen once in a full parallel run: 2), as the CLI's test below.
  CHECK(store->claim_conflicts() >= 1);
  chaos::sql_session node1(test::galera_node_uri(1), 0);
  // A causal read: node 2's write is certified cluster-wide, but node 1 may not have applied it
  // yet (seen once under the sanitizers: the row read as before it); this waits until it has.
  node1.execute("SET SESSION wsrep_sync_wait = 1");
  CHECK(node1.number("SELECT COUNT(*) FROM " + table + " WHERE dibs_lock_by = 'on-node-2' AND dibs_lock_token = 42") == 1);
}

TEST_CASE("Galera: a final write on one node whose lease another node took meanwhile is reported lost, never written",
          "[galera][fence]") {
  const auto table = test::unique_table("galera_fence");
  auto store = store_on_node1(table);
  REQUIRE(store->seed(1, 8) == 1);
  const auto got = store->claim_blocking(claim_request{1, "on-node-1", 60s, 5s});
  REQUIRE(got.size() == 1);
  test::galera_gate gate(table);
  chaos::sql_session node2(test::galera_node_uri(2), 0);
  REQUIRE(test::eventually([&] { return node2.number("SELECT COUNT(*) FROM " + table + " WHERE dibs_lock_by = 'on-node-1'") == 1; }));

  gate.close();
  auto written = std::async(std::launch::async,
                            [&] { return store->complete_blocking({completion{got[0].ref(), R"({"query":"from node 1"})"}}); });
  const bool waits = gate.someone_waits();  // the write holds the row, inside its UPDATE
  if (!waits) gate.open();
  REQUIRE(waits);
  node2_takes(node2, table);      // as if the lease had run out and node 2's worker claimed it
  const bool ended = written.wait_for(60s) == std::future_status::ready;
  gate.open();
  REQUIRE(ended);
  const auto r = written.get();
  CHECK(r.applied == 0);
  CHECK(r.lost == std::vector<std::string>{got[0].id});
  chaos::sql_session node1(test::galera_node_uri(1), 0);
  CHECK(node1.number("SELECT COUNT(*) FROM " + table + " WHERE location IS NULL AND dibs_lock_token = 42") == 1);
}

namespace {
long figure_in(const std::string& out, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(out, m, std::regex(pattern)) ? std::stol(m[1]) : -1;
}
}  // namespace

TEST_CASE("Galera: dibs enrich on node 1 loses a claim to node 2: 'claim conflicts 1' in its summary and /metrics, no call for "
          "node 2's row",
          "[galera][claim][enrich]") {
  // One row, so that dibs's first claim surely holds it (its first claims are small: the
  // adaptive limit starts low).
  const auto table = test::unique_table("galera_enrich_cert");
  auto store = store_on_node1(table);
  REQUIRE(store->seed(1, 9) == 1);
  test::galera_gate gate(table);
  chaos::sql_session node1(test::galera_node_uri(1), 0), node2(test::galera_node_uri(2), 0);
  wait_for_rows_on_node2(node2, table, 1);
  test::small_api api("keepalive", {"--backlog", "128"});
  const auto port = test::a_closed_port();
  const std::string log = test::unique_name("/tmp/dibs-galera-enrich") + ".log";

  gate.close();
  test::child_process run({test::dibs_binary(), "enrich", "--store", test::with_table(test::galera_node_uri(1), table), "--url",
                           api.base_url() + "/json/{originatingIp}", "--shards", "1", "--no-progress", "--no-preflight", "--follow",
                           "--metrics-port", std::to_string(port)},
                          false, log);
  const bool waits = gate.someone_waits();  // its first claim holds the row, inside its UPDATE
  if (!waits) gate.open();
  REQUIRE(waits);
  // Node 2's worker does the row meanwhile: dibs's claim is aborted, counted, and run again
  // finds nothing to claim.
  node2.execute("UPDATE " + table + R"( SET location = '{"query":"done on node 2"}')");
  auto conflicts = [&] { return figure_in(test::raw_http(port, "GET", "/metrics").body, "\ndibs_claim_conflicts_total (\\d+)"); };
  // At least one: under a loaded machine the claim run again can meet node 2's write-set a second
  // time before it is applied here (seen once in a full parallel run: 2).
  const bool counted = test::eventually([&] { return conflicts() >= 1; });
  gate.open();
  CHECK(counted);
  run.signal(SIGTERM);
  std::string out;
  run.finish(out);
  std::ifstream in(log);
  out += std::string(std::istreambuf_iterator<char>(in), {});
  std::remove(log.c_str());
  INFO(out);
  CHECK(figure_in(out, "claim conflicts (\\d+)") >= 1);
  CHECK(out.find("claim failed") == std::string::npos);  // never a store error
  CHECK(figure_in(test::raw_http(api.port(), "GET", "/stats").body, "\"requests\": (\\d+)") == 0);  // no call for node 2's row
  CHECK(node1.number("SELECT COUNT(*) FROM " + table + R"( WHERE location = '{"query":"done on node 2"}')") == 1);
}
