// Three dibs enrich processes, each given the whole cluster with its own node first, drain one
// table while a node is killed (SIGKILL) and, later in the run, rejoins by IST: the worker on the
// killed node goes on through the next node of its URI, and the run ends with every row done
// once, each key asked of the API once (counted at the API: tests/servers/small_api.py's /asked),
// no row failed. The small run is part of `make test`; the 20,000-row one is [.big] (`make
// chaos-cluster`).
#include "galera/galera_env.hpp"
#include "chaos/sql_session.hpp"
#include "http_servers/small_api.hpp"
#include "support/eventually.hpp"
#include "support/raw_http.hpp"
#include "support/run_dibs.hpp"
#include "support/server_env.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <regex>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
long sum_of(const std::string& out, const std::string& pattern) {
  long sum = 0;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it) sum += std::stol((*it)[1]);
  return sum;
}

// `rows` rows; worker i (1..3) on node i first; node `killed` killed once a fifth of the rows are
// done, rejoined once two fifths are.
void drain_with_a_node_killed(std::size_t rows, int killed) {
  const auto table = test::unique_table("galera_drain");
  {
    sql::mysql_options o;
    o.uri = test::with_table(test::galera_node_uri(1), table);
    o.threads = 1;
    sql::mysql_store admin(o);
    REQUIRE(admin.seed(rows, 45) == rows);
  }
  // Node 1 is where the test reads, unless it is the one killed.
  const int reader_node = killed == 1 ? 2 : 1;
  chaos::sql_session reader(test::galera_node_uri(reader_node), 0);
  auto done = [&] { return reader.number("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL"); };
  // Each answer takes 50 ms: the run lasts long enough for the kill and the rejoin to land in it.
  test::small_api api("keepalive", {"--backlog", "128", "--latency-ms", "50"});

  std::vector<std::unique_ptr<test::child_process>> workers;
  std::vector<std::string> logs;
  for (int i = 1; i <= test::galera_nodes; ++i) {
    logs.push_back(test::unique_name("/tmp/dibs-galera-worker") + ".log");
    workers.push_back(std::make_unique<test::child_process>(
        std::vector<std::string>{"timeout", "--signal=TERM", "--kill-after=30", "300", test::dibs_binary(), "enrich", "--store",
                                 test::with_table(test::galera_uri_from(i), table), "--url", api.base_url() + "/json/{originatingIp}",
                                 "--worker-id", "node" + std::to_string(i) + "-worker", "--concurrency", "8", "--lease", "15s",
                                 "--no-progress", "--no-preflight"},
        false, logs.back()));
  }
  const auto started = std::chrono::steady_clock::now();
  REQUIRE(test::eventually([&] { return done() >= rows / 5; }, 240s));
  const auto done_at_kill = done();
  test::galera_node("kill", killed);
  const auto killed_at = std::chrono::steady_clock::now();
  REQUIRE(test::eventually([&] { return done() >= 2 * rows / 5; }, 240s));
  const auto done_at_rejoin = done();
  test::galera_node("rejoin", killed);
  const auto rejoined_at = std::chrono::steady_clock::now();

  std::string out;
  std::vector<int> rcs;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    std::string said;
    rcs.push_back(workers[i]->finish(said));
    out += "---- worker on node " + std::to_string(i + 1) + " (rc " + std::to_string(rcs.back()) + "):\n" + said + text_of(logs[i]);
    std::remove(logs[i].c_str());
  }
  const auto ended_at = std::chrono::steady_clock::now();
  auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  INFO(out);
  INFO("rows " << rows << "; node " << killed << " killed at " << seconds(killed_at - started) << " s (" << done_at_kill
               << " done), rejoined (Synced) at " << seconds(rejoined_at - started) << " s (" << done_at_rejoin
               << " done when it began), the run ended at " << seconds(ended_at - started) << " s");
  for (int rc : rcs) CHECK(rc == 0);  // each ended by itself: drained, not timed out

  // Every row done once, with its own answer; none failed.
  CHECK(done() == rows);
  CHECK(reader.number("SELECT COUNT(*) FROM " + table + " WHERE JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) = originatingIp") == rows);
  CHECK(reader.number("SELECT COUNT(*) FROM " + table + " WHERE dibs_failed_at IS NOT NULL") == 0);
  // The summaries' completed figures: no more than the rows (no row written by two workers), and
  // with the lost leases every row. A write the killed node committed but never acknowledged is
  // sent again through the next node, finds its row already done (by itself) and is reported as
  // a lost lease: the worker can't tell its own write from another's (seen: 4 of 5,000).
  const auto completed = sum_of(out, "summary: completed=(\\d+) ");
  CHECK(completed <= static_cast<long>(rows));
  CHECK(completed + sum_of(out, "lost_leases=(\\d+) ") >= static_cast<long>(rows));
  // The worker whose node died went on through the next node of its URI.
  CHECK(out.find("now connected to " + test::galera_host_port(killed % test::galera_nodes + 1)) != std::string::npos);
  // A claim that lost its rows at commit was a conflict, never a failed claim.
  CHECK_FALSE(std::regex_search(out, std::regex("claim failed[^\\n]*error 1213")));

  // At the API: every key asked, each once (a key on k rows may be asked k times).
  std::map<std::string, std::uint64_t> rows_of;
  for (auto& r : reader.rows("SELECT originatingIp, COUNT(*) FROM " + table + " GROUP BY originatingIp HAVING COUNT(*) > 1"))
    rows_of[r[0].value_or("")] = std::stoull(r[1].value_or("0"));
  const auto distinct = reader.number("SELECT COUNT(DISTINCT originatingIp) FROM " + table);
  const auto asked = test::raw_http(api.port(), "GET", "/asked").body;
  INFO("the API's /asked: " << asked.substr(0, 2000));
  CHECK(sum_of(asked, "\"keys\": (\\d+)") == static_cast<long>(distinct));
  std::string again;
  const std::regex pair("\"([^\"]+)\": (\\d+)");
  const auto from = asked.find("\"again\"");
  REQUIRE(from != std::string::npos);
  for (auto it = std::sregex_iterator(asked.begin() + static_cast<long>(from), asked.end(), pair); it != std::sregex_iterator(); ++it) {
    const auto key = (*it)[1].str();
    if (key == "again") continue;
    if (std::stoull((*it)[2]) > rows_of[key]) again += key + " asked " + (*it)[2].str() + " times; ";
  }
  CHECK(again.empty());
}
}  // namespace

TEST_CASE("Galera: three workers on three nodes drain 5,000 rows, a node killed and rejoined mid-run: each row done once, each "
          "key asked once",
          "[galera][failover]") {
  drain_with_a_node_killed(5000, 2);
}

TEST_CASE("Galera: three workers on three nodes drain 20,000 rows, a node killed and rejoined mid-run: each row done once, each "
          "key asked once",
          "[galera][failover][.big]") {
  drain_with_a_node_killed(20000, 2);
}
