// The chaos driver: K `dibs enrich` worker processes against one MariaDB table and the stub,
// while faults are injected at random (seeded; the seed is printed so a failure can be
// replayed): workers killed with SIGKILL and restarted, workers frozen (SIGSTOP) past their
// lease and thawed, so they come back holding leases others have taken over; API errors,
// garbage, timeouts, 429s and answers slower than the lease; a loopback TCP proxy between the
// workers and MariaDB that stalls (past the lease: renewals can't land), resets every connection
// and refuses new ones; a MariaDB restart.
//
// The invariants are read from the database's own record, not from the workers' logs. An audit
// trigger records every write of the target column with the lease (token, holder, expiry) the
// row had at that moment:
//   - every row ends done or failed; none stays leased;
//   - every done row was written exactly once, by the lease (token) the row had at that moment;
//   - every stored result is the answer the stub gives for that row's address;
//   - every failed row has a reason, and attempts within --max-attempts.
//
//   dibs_chaos [--rounds 1] [--seed S] [--items 2000] [--workers 3] [--seconds 8] [--no-db-restart]
//              [--inject-violations]   (the checker's own test: it must report what was broken)
//              [--no-proxy]            (workers reach the store directly, to tell the proxy's part in a finding)
//              [--logs DIR]            (the workers' logs, at debug level; a temporary directory otherwise)
// A round that does not drain prints the rows still open, the server's transactions, and the end
// of every worker's log (and, with DIBS_CHAOS_STACKS set, every worker's threads, through gdb).
#include "support/mongo_env.hpp"
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "tcp_proxy.hpp"

#include <adapters/mysql/mysql_uri.hpp>

#include <adapters/mongo/mongo_store.hpp>
#include <adapters/mysql/mysql_store.hpp>
#include <examples/stub/ipapi_stub.hpp>

#include <simdjson.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace dibs;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {
// SIGINT/SIGTERM: stop at the next step, and take the workers down on the way out (their
// child_process handles kill them), instead of leaving them orphaned.
volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }
void stop_if_interrupted() {
  if (g_interrupted) throw std::runtime_error("interrupted");
}

struct settings {
  int rounds = 1;
  std::uint64_t seed = 0;
  std::size_t items = 2000;
  int workers = 3;
  int seconds = 8;
  bool db_restart = true;
  bool inject = false;  // --inject-violations: break the table on purpose, to show the checks fire
  bool mongo = false;  // --store mongo: the MongoDB-wire server (its write log) instead of MariaDB
  bool proxy = true;   // --no-proxy: workers reach the store directly
  int max_attempts = 8;
  std::string logs;  // --logs DIR
};

struct tally {
  std::map<std::string, std::uint64_t> faults;  // by kind
  std::uint64_t items = 0, done = 0, failed = 0, takeovers = 0, lost_leases = 0, late_commits = 0, violations = 0;
};

std::uint64_t number(const std::optional<std::string>& v) { return v ? std::stoull(*v) : 0; }

// A number from canonical extended JSON ({"$numberDouble": "1.5"}, {"$numberInt": "2"}, ...) or
// plain JSON; nullopt for anything else.
std::optional<double> ejson_number(simdjson::dom::element e) {
  double d = 0;
  if (!e.get_double().get(d)) return d;
  for (const char* k : {"$numberDouble", "$numberInt", "$numberLong"}) {
    std::string_view text;
    if (!e[k].get_string().get(text)) return std::stod(std::string(text));
  }
  return std::nullopt;
}

std::uint64_t summary_field(const std::string& out, const std::string& name) {
  const auto line_at = out.rfind("summary: ");
  if (line_at == std::string::npos) return 0;
  const auto at = out.find(name + "=", line_at);
  return at == std::string::npos ? 0 : std::stoull(out.substr(at + name.size() + 1));
}

class round_runner {
 public:
  round_runner(const settings& s, std::uint64_t seed, tally& t) : s_(s), rng_(seed), t_(t) {}

  void run(int index) {
    round_ = index;
    if (s_.mongo) {
      run_mongo(index);
      return;
    }
    const auto table = test::unique_table("chaos");
    table_ = table;
    sql::mysql_options o;
    o.uri = test::mysql_uri_for(table);  // the driver itself goes straight to the server
    const auto server = sql::parse_mysql_uri(o.uri);
    uri_ = o.uri;
    if (s_.proxy) {
      proxy_ = std::make_unique<test::tcp_proxy>(server.host, server.port);
      uri_ = "mysql://" + server.user + (server.password.empty() ? "" : ":" + server.password) + "@127.0.0.1:" +
             std::to_string(proxy_->port()) + "/" + server.database + "?table=" + table;
    }
    store_ = std::make_unique<sql::mysql_store>(o);
    store_->reset_table();
    // Every write of the target, with the lease the row had at that moment.
    store_->execute("CREATE TABLE " + table + "_audit (id BIGINT UNSIGNED, token BIGINT UNSIGNED NULL, "
                    "by_worker VARCHAR(128) NULL, lease_until DATETIME(6) NULL, written_at DATETIME(6), val LONGTEXT)");
    store_->execute("CREATE TRIGGER " + table + "_audit_trg BEFORE UPDATE ON " + table +
                    " FOR EACH ROW BEGIN IF NOT (NEW.location <=> OLD.location) THEN INSERT INTO " + table +
                    "_audit VALUES (OLD.id, OLD.lock_token, OLD.lock_by, OLD.lock_until, NOW(6), NEW.location); END IF; END");
    store_->seed(s_.items - s_.items / 50, rng_());
    for (std::size_t i = 0; i < s_.items / 50; ++i)  // some addresses the API has no data for
      store_->execute("INSERT INTO " + table + " (originatingIp) VALUES ('10.0." + std::to_string(i / 200) + "." +
                      std::to_string(i % 200 + 1) + "')");
    t_.items += s_.items;

    start_api();
    run_workers(index, true);
    stop_api();
    proxy_.reset();
    if (s_.inject) inject_violations(table);
    check(table, index);
  }

 private:
  void start_api() {
    auto so = stub::stub_options::loopback(20ms);
    so.threads = 2;
    so.error_rate = 0.08;
    so.garbage_rate = 0.04;
    so.timeout_rate = 0.01;
    so.slow_rate = 0.02;  // right answers after twice the lease: the lease keeper must hold them
    so.slow_latency = 2'000ms;
    so.rate_limit = 400;  // 429 bursts with ip-api's headers
    so.rate_window = 250ms;
    so.seed = rng_();
    api_ = std::make_unique<stub::ipapi_stub>(so);
    api_->start();
  }

  // The stub's faults join the tally.
  void stop_api() {
    const auto f = api_->faults();
    t_.faults["API 500"] += f.errors;
    t_.faults["API garbage"] += f.garbage;
    t_.faults["API timeout"] += f.timeouts;
    t_.faults["API slow answer"] += f.slow;
    t_.faults["API 429"] += api_->rate_limited();
    api_->stop();
  }

  // Workers run while faults are injected, then until the store is drained (bounded).
  void run_workers(int index, bool can_restart_db) {
    workers_.resize(static_cast<std::size_t>(s_.workers));
    outputs_.assign(workers_.size(), {});
    for (std::size_t i = 0; i < workers_.size(); ++i) start(i);

    const auto end = steady::now() + std::chrono::seconds(s_.seconds);
    bool restarted_db = false;
    while (steady::now() < end && any_running()) {
      stop_if_interrupted();
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 300)(rng_)));
      const auto w = std::uniform_int_distribution<std::size_t>(0, workers_.size() - 1)(rng_);
      switch (std::uniform_int_distribution<int>(0, 12)(rng_)) {
        case 0: case 1: case 2:  // kill -9, then a new worker in its place
          if (workers_[w]->running()) {
            workers_[w]->signal(SIGKILL);
            collect(w);
            ++t_.faults["kill -9"];
          }
          start(w);
          break;
        case 3: case 4: {  // frozen past its lease: it wakes up holding leases others took over
          if (!workers_[w]->running()) break;
          workers_[w]->signal(SIGSTOP);
          std::this_thread::sleep_for(1'500ms);
          workers_[w]->signal(SIGCONT);
          ++t_.faults["freeze past the lease"];
          break;
        }
        case 5:
          if (can_restart_db && s_.db_restart && !restarted_db && !std::getenv("MYSQL_URI")) {
            test::restart_mariadb();
            restarted_db = true;
            ++t_.faults["MariaDB restart"];
          }
          break;
        case 6:  // the network to the database stalls past the lease: renewals and writes wait
          if (!proxy_) break;
          proxy_->stall(1'200ms);
          std::this_thread::sleep_for(1'200ms);
          ++t_.faults["database link stalled past the lease"];
          break;
        case 7:
          if (!proxy_) break;
          proxy_->reset_all();
          ++t_.faults["database connections reset"];
          break;
        case 8:
          if (!proxy_) break;
          proxy_->refuse(3);
          ++t_.faults["database connections refused (3)"];
          break;
        default:
          break;  // let it run
      }
    }
    // The faults stop; every worker runs until the table is drained (bounded).
    for (std::size_t i = 0; i < workers_.size(); ++i)
      if (!workers_[i]->running()) {
        collect(i);
        start(i);
      }
    const auto deadline = steady::now() + 240s;
    while (any_running() && steady::now() < deadline) {
      stop_if_interrupted();
      std::this_thread::sleep_for(50ms);
    }
    if (any_running()) report_stuck(index);
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      if (workers_[i]->running()) {
        ++t_.violations;
        std::printf("chaos: round %d: worker %zu (pid %d) still running after the deadline\n", index, i, workers_[i]->pid());
        workers_[i]->signal(SIGKILL);
      }
      collect(i);
    }
  }

  std::string log_path(std::size_t worker) const {
    return s_.logs + "/round-" + std::to_string(round_) + "-worker-" + std::to_string(worker) + ".log";
  }

  // What a round that does not drain leaves to look at: the open rows, the server's transactions
  // and the end of each worker's log.
  void report_stuck(int round) {
    std::printf("chaos: round %d did not drain; open rows, transactions and the workers' last log lines follow\n", round);
    try {
      if (store_) {
        const auto rows = store_->query_value(
            "SELECT GROUP_CONCAT(CONCAT_WS(' ', id, lock_by, lock_token, lock_until, attempts, error) SEPARATOR '\n') FROM "
            "(SELECT * FROM " + table_ + " WHERE location IS NULL AND failed_at IS NULL ORDER BY id LIMIT 20) x");
        const auto now = store_->query_value("SELECT NOW(6)");
        std::printf("chaos: server time %s; open rows (id holder token lease_until attempts error):\n%s\n",
                    now.value_or("?").c_str(), rows.value_or("(none)").c_str());
        const auto trx = store_->query_value(
            "SELECT GROUP_CONCAT(CONCAT_WS(' ', trx_mysql_thread_id, trx_state, trx_started, trx_rows_locked, "
            "IFNULL(trx_query, '-')) SEPARATOR '\n') FROM information_schema.innodb_trx");
        std::printf("chaos: transactions (thread state started rows_locked query):\n%s\n", trx.value_or("(none)").c_str());
        const auto sessions = store_->query_value(
            "SELECT GROUP_CONCAT(CONCAT_WS(' ', ID, HOST, COMMAND, TIME, IFNULL(STATE, '-')) SEPARATOR '\n') FROM "
            "information_schema.PROCESSLIST WHERE COMMAND <> 'Daemon'");
        std::printf("chaos: sessions (id client command seconds state):\n%s\n", sessions.value_or("(none)").c_str());
      } else if (mongo_) {
        std::printf("chaos: open documents: %s\n",
                    mongo_->run_command("{\"find\": \"" + collection_ + "\", \"filter\": {\"location\": null, "
                                        "\"lock.failed\": {\"$exists\": false}}, \"limit\": 20}").c_str());
      }
    } catch (const std::exception& e) {
      std::printf("chaos: (the store could not be read: %s)\n", e.what());
    }
    // Who holds which end of each database connection (the proxy is this process).
    std::printf("chaos: TCP connections (this process is %d):\n", static_cast<int>(::getpid()));
    std::fflush(stdout);
    if (std::system("ss -tnpH state established 2>/dev/null | grep -E 'dibs' || true") != 0) std::printf("(ss failed)\n");
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      if (std::getenv("DIBS_CHAOS_STACKS") && workers_[i]->running()) {
        std::printf("chaos: ---- worker %zu (pid %d) threads:\n", i, workers_[i]->pid());
        std::fflush(stdout);
        const auto gdb = "gdb -q -batch -p " + std::to_string(workers_[i]->pid()) +
                         " -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(Thread|#)'";
        if (std::system(gdb.c_str()) != 0) std::printf("(gdb failed)\n");
      }
      std::printf("chaos: ---- %s (pid %d), last lines:\n", log_path(i).c_str(), workers_[i]->pid());
      std::fflush(stdout);
      const auto cmd = "tail -n 25 " + test::shell_quote(log_path(i));
      if (std::system(cmd.c_str()) != 0) std::printf("(no log)\n");
    }
    std::fflush(stdout);
  }

  void start(std::size_t i) {
    std::vector<std::string> store_args{"--store", uri_};
    if (s_.mongo) store_args = {"--store", uri_, "--db", "dibs_chaos", "--collection", collection_, "--claim", strategy_};
    std::vector<std::string> args{test::env_or("DIBS_BIN", DIBS_BIN_PATH), "enrich"};  // DIBS_BIN: a copy, while you rebuild
    args.insert(args.end(), store_args.begin(), store_args.end());
    std::vector<std::string> rest{
        "--url", api_->base_url() + "/json/{originatingIp}",
        "--concurrency", "20", "--claim-batch", "10", "--lease", s_.mongo ? "2s" : "1s", "--grace", "0s", "--max-attempts",
        std::to_string(s_.max_attempts), "--request-timeout", "4s", "--backoff-base", "20ms", "--backoff-max", "200ms",
        "--shutdown-timeout", "1s", "--no-progress", "--log-level", "debug"};
    args.insert(args.end(), rest.begin(), rest.end());
    workers_[i] = std::make_unique<test::child_process>(args, false, log_path(i));
  }

  // ---- MongoDB-wire server: the same faults (no server restart: the stand-in keeps its data
  // in memory), the invariants from its write log.
  void run_mongo(int index) {
    static constexpr const char* strategies[] = {"batch", "update-find", "find-and-modify"};
    strategy_ = strategies[index % 3];
    collection_ = test::unique_collection("chaos");
    mongo::mongo_options o;
    o.uri = test::mongodb_uri();
    o.db = "dibs_chaos";
    o.collection = collection_;
    o.threads = 2;
    mongo_ = std::make_unique<mongo::mongo_store>(o);
    mongo_->drop();
    const bool write_log = [&] {
      try {
        mongo_->run_command("{\"dibsWatch\": \"" + collection_ + "\", \"field\": \"location\", \"lock\": \"lock\"}");
        return true;
      } catch (const std::exception&) {
        return false;  // a real mongod has no write log: the other checks still run
      }
    }();
    mongo_->seed(s_.items - s_.items / 50, rng_());
    std::string docs;
    for (std::size_t i = 0; i < s_.items / 50; ++i)
      docs += std::string(docs.empty() ? "" : ",") + "{\"originatingIp\": \"10.1.0." + std::to_string(i + 1) + "\", \"location\": null}";
    if (!docs.empty()) mongo_->run_command("{\"insert\": \"" + collection_ + "\", \"documents\": [" + docs + "]}");
    t_.items += s_.items;

    // The workers reach the server through the proxy: the authority's host:port replaced.
    const auto& uri = o.uri;
    const auto start_at = uri.find("//") + 2;
    const auto end_at = uri.find_first_of("/?", start_at);
    auto authority = uri.substr(start_at, end_at == std::string::npos ? std::string::npos : end_at - start_at);
    const auto at = authority.rfind('@');
    const auto hostport = authority.substr(at == std::string::npos ? 0 : at + 1);
    const auto colon = hostport.rfind(':');
    uri_ = uri;
    if (s_.proxy) {
      proxy_ = std::make_unique<test::tcp_proxy>(hostport.substr(0, colon),
                                                 static_cast<std::uint16_t>(std::stoi(hostport.substr(colon + 1))));
      uri_ = uri.substr(0, start_at) + (at == std::string::npos ? "" : authority.substr(0, at + 1)) + "127.0.0.1:" +
             std::to_string(proxy_->port()) + (end_at == std::string::npos ? "" : uri.substr(end_at));
    }

    start_api();
    run_workers(index, false);
    stop_api();
    proxy_.reset();
    if (s_.inject)  // a write outside any lease, with an answer for another address: three checks fire
      mongo_->run_command("{\"update\": \"" + collection_ + "\", \"updates\": [{\"q\": {\"location\": {\"$ne\": null}}, "
                          "\"u\": {\"$set\": {\"location\": {\"query\": \"0.0.0.0\"}}}}]}");
    check_mongo(index, write_log);
    mongo_->drop();
  }

  void check_mongo(int round, bool write_log) {
    const auto st = mongo_->stats_blocking();
    violation(round, "neither done nor failed, or still leased", st.pending + st.leased_live + st.leased_expired);
    simdjson::dom::parser p;
    if (write_log) {
      const auto writes = mongo_->run_command("{\"dibsWrites\": \"" + collection_ + "\"}");
      std::map<std::string, int> per_doc;
      std::uint64_t no_lease = 0;
      for (auto w : p.parse(writes)["writes"].get_array()) {
        std::string_view oid;
        if (w["_id"]["$oid"].get_string().get(oid)) continue;
        ++per_doc[std::string(oid)];
        if (w["token"].is_null() || w["by"].is_null()) ++no_lease;
      }
      std::uint64_t twice = 0;
      for (const auto& [id, n] : per_doc) twice += n > 1 ? 1 : 0;
      violation(round, "written more than once", twice);
      violation(round, "written without a lease", no_lease);
      if (per_doc.size() != st.done) violation(round, "done without a recorded write", st.done > per_doc.size() ? st.done - per_doc.size() : 0);
    }
    const auto all = mongo_->run_command("{\"find\": \"" + collection_ + "\", \"filter\": {}, \"batchSize\": 1000000}");
    simdjson::dom::parser q;
    std::uint64_t wrong = 0, bad_failures = 0;
    for (auto d : p.parse(all)["cursor"]["firstBatch"].get_array()) {
      std::string_view ip;
      if (d["originatingIp"].get_string().get(ip)) continue;
      simdjson::dom::element loc;
      if (!d["location"].get(loc) && !loc.is_null()) {
        // The stored object must hold the stub's answer for this address, member by member.
        auto expected = q.parse(stub::answer_for(ip));
        for (auto [key, value] : expected.get_object()) {
          simdjson::dom::element got;
          if (loc[key].get(got)) { ++wrong; break; }
          const bool same = value.is_string() ? got.is_string() && got.get_string().value_unsafe() == value.get_string().value_unsafe()
                                              : ejson_number(got) == ejson_number(value);
          if (!same) {
            ++wrong;
            break;
          }
        }
        continue;
      }
      simdjson::dom::element failed;
      if (d["lock"]["failed"].get(failed)) continue;
      std::string_view reason;
      simdjson::dom::element attempts_field;
      const auto attempts = failed["attempts"].get(attempts_field) ? std::nullopt : ejson_number(attempts_field);
      if (failed["reason"].get_string().get(reason) || reason.empty() || !attempts || *attempts > s_.max_attempts)
        ++bad_failures;
    }
    violation(round, "holding an answer the stub never gave for their address", wrong);
    violation(round, "failed without a reason or past --max-attempts", bad_failures);
    t_.done += st.done;
    t_.failed += st.failed;
  }

  void collect(std::size_t i) {
    std::string out;
    workers_[i]->finish(out);
    t_.lost_leases += summary_field(out, "lost_leases");
    outputs_[i] += out;
  }

  bool any_running() {
    for (auto& w : workers_)
      if (w->running()) return true;
    return false;
  }

  // What a broken store would leave: a second write of a done row with an answer for another
  // address (outside any lease), and a failed row still leased. Four checks must fire.
  void inject_violations(const std::string& table) {
    store_->execute("UPDATE " + table + " SET location = '{\"query\":\"0.0.0.0\"}' WHERE location IS NOT NULL ORDER BY id LIMIT 1");
    store_->execute("UPDATE " + table + " SET lock_token = 1, lock_by = 'ghost', lock_until = NOW(6) WHERE failed_at IS NOT NULL ORDER BY id LIMIT 1");
  }

  void violation(int round, const std::string& what, std::uint64_t n) {
    if (n == 0) return;
    t_.violations += n;
    std::printf("chaos: round %d: VIOLATION: %llu row(s) %s\n", round, (unsigned long long)n, what.c_str());
  }

  void check(const std::string& table, int round) {
    auto count = [&](const std::string& sql) { return number(store_->query_value(sql)); };
    const std::string a = table + "_audit";
    violation(round, "neither done nor failed", count("SELECT COUNT(*) FROM " + table + " WHERE location IS NULL AND failed_at IS NULL"));
    violation(round, "still leased", count("SELECT COUNT(*) FROM " + table + " WHERE lock_token IS NOT NULL"));
    violation(round, "written more than once",
              count("SELECT COUNT(*) FROM (SELECT id FROM " + a + " GROUP BY id HAVING COUNT(*) > 1) x"));
    violation(round, "done without a recorded write",
              count("SELECT COUNT(*) FROM " + table + " t WHERE location IS NOT NULL AND NOT EXISTS (SELECT 1 FROM " + a +
                    " w WHERE w.id = t.id)"));
    violation(round, "written without a lease", count("SELECT COUNT(*) FROM " + a + " WHERE token IS NULL OR lease_until IS NULL"));
    // Not a violation: the fence is checked when the write locks its rows, and the row lock keeps
    // every other worker out until the commit, so a lease may run out during those milliseconds
    // (or while the writer is frozen) and the write still lands, once. Counted, to be seen.
    t_.late_commits += count("SELECT COUNT(*) FROM " + a + " WHERE token IS NOT NULL AND lease_until < written_at");
    violation(round, "failed without a reason or past --max-attempts",
              count("SELECT COUNT(*) FROM " + table + " WHERE failed_at IS NOT NULL AND (error IS NULL OR error = '' OR attempts > " +
                    std::to_string(s_.max_attempts) + ")"));
    // Every stored answer is the stub's answer for that address (it is deterministic per address).
    const auto rows = count("SELECT MAX(id) FROM " + table);
    std::uint64_t wrong = 0;
    for (std::uint64_t from = 0; from <= rows; from += 500) {
      const auto text = store_->query_value(
          "SELECT GROUP_CONCAT(CONCAT(originatingIp, '\\t', location) SEPARATOR '\\n') FROM " + table +
          " WHERE location IS NOT NULL AND id > " + std::to_string(from) + " AND id <= " + std::to_string(from + 500));
      if (!text) continue;
      std::istringstream lines(*text);
      for (std::string line; std::getline(lines, line);) {
        const auto tab = line.find('\t');
        if (tab == std::string::npos || line.substr(tab + 1) != stub::answer_for(line.substr(0, tab))) ++wrong;
      }
    }
    violation(round, "holding an answer the stub never gave for their address", wrong);
    t_.done += count("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL");
    t_.failed += count("SELECT COUNT(*) FROM " + table + " WHERE failed_at IS NOT NULL");
    t_.takeovers += count("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL AND attempts > 1");
    store_->execute("DROP TABLE " + a);
    store_->execute("DROP TABLE " + table);
  }

  const settings& s_;
  std::mt19937_64 rng_;
  tally& t_;
  std::string uri_;
  int round_ = 0;
  std::string table_;
  std::string collection_, strategy_;
  std::unique_ptr<mongo::mongo_store> mongo_;
  std::unique_ptr<sql::mysql_store> store_;
  std::unique_ptr<stub::ipapi_stub> api_;
  std::unique_ptr<test::tcp_proxy> proxy_;
  std::vector<std::unique_ptr<test::child_process>> workers_;
  std::vector<std::string> outputs_;
};
}  // namespace

int main(int argc, char** argv) {
  settings s;
  s.seed = std::random_device{}();
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--rounds") s.rounds = std::stoi(next());
    else if (a == "--seed") s.seed = std::stoull(next());
    else if (a == "--items") s.items = std::stoul(next());
    else if (a == "--workers") s.workers = std::stoi(next());
    else if (a == "--seconds") s.seconds = std::stoi(next());
    else if (a == "--no-db-restart") s.db_restart = false;
    else if (a == "--inject-violations") s.inject = true;
    else if (a == "--store") s.mongo = next() == "mongo";
    else if (a == "--no-proxy") s.proxy = false;
    else if (a == "--logs") s.logs = next();
    else {
      std::fprintf(stderr, "dibs_chaos: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const bool temporary_logs = s.logs.empty();  // removed after a clean run
  if (temporary_logs) {
    char dir[] = "/tmp/dibs-chaos-XXXXXX";
    if (!::mkdtemp(dir)) {
      std::perror("dibs_chaos: mkdtemp");
      return 2;
    }
    s.logs = dir;
  }
  std::printf("chaos: workers' logs in %s\n", s.logs.c_str());
  std::printf("chaos: %s; seed %llu (replay with --seed %llu), %d round(s) of %zu items, %d workers, %d s of faults\n",
              s.mongo ? "MongoDB-wire server" : "MariaDB", (unsigned long long)s.seed, (unsigned long long)s.seed, s.rounds,
              s.items, s.workers, s.seconds);
  std::fflush(stdout);
  tally t;
  std::mt19937_64 seeds(s.seed);
  try {
    for (int r = 1; r <= s.rounds; ++r) {
      round_runner(s, seeds(), t).run(r);
      std::printf("chaos: round %d done: %llu violation(s) so far\n", r, (unsigned long long)t.violations);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("chaos: error: %s\n", e.what());
    return 2;
  }
  // On MongoDB a finished document keeps no attempt count, and late commits can't happen (each
  // write is one conditional update): those two are shown as "-" there.
  const auto shown = [&](std::uint64_t n) { return s.mongo ? std::string("-") : std::to_string(n); };
  std::printf("chaos: rounds=%d items=%llu done=%llu failed=%llu takeovers=%s lost_leases=%llu late_commits=%s "
              "violations=%llu\n",
              s.rounds, (unsigned long long)t.items, (unsigned long long)t.done, (unsigned long long)t.failed,
              shown(t.takeovers).c_str(), (unsigned long long)t.lost_leases, shown(t.late_commits).c_str(),
              (unsigned long long)t.violations);
  for (const auto& [kind, n] : t.faults) std::printf("chaos: faults: %s: %llu\n", kind.c_str(), (unsigned long long)n);
  // Kept only when they may explain something (the checker's own test breaks the store on purpose).
  if (temporary_logs && (t.violations == 0 || s.inject)) std::filesystem::remove_all(s.logs);
  return t.violations == 0 ? 0 : 1;
}
