#include "pg_round.hpp"
#include "pg_failover.hpp"

#include "sql_checker.hpp"
#include "postgres/pg_env.hpp"
#include "support/process.hpp"

#include <dibs/stores/open_store.hpp>
#include <dibs/stores/store_uri.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace dibs::chaos {

namespace {
using namespace std::chrono_literals;
std::string with_param(const std::string& uri, const std::string& param) {
  return uri + (uri.find('?') == std::string::npos ? "?" : "&") + param;
}
}  // namespace

void pg_round::run() {
  table_ = test::unique_pg_table("chaos");
  const bool failover = s_.store == chaos_store::postgres_failover;
  if (failover) start_pair();  // pg_failover.cpp
  // The driver itself goes straight to the server (or the pair).
  direct_uri_ = failover ? test::with_table(pair_uri(), table_) : test::postgres_uri_for(table_);
  uri_ = direct_uri_;
  if (s_.proxy && !failover) {  // the workers through the proxy: the URI's host replaced
    const auto where = parse_store_uri(direct_uri_);
    proxy_ = std::make_unique<test::tcp_proxy>(where.host, where.port ? where.port : 5432);
    uri_ = where.with_hosts("127.0.0.1:" + std::to_string(proxy_->port()));
  }
  // The driver's own sessions are named so that no fault takes them for a worker's.
  store_ = std::dynamic_pointer_cast<pg::pg_store>(open_store(with_param(direct_uri_, "application_name=dibs-chaos-driver")));
  if (!store_) throw std::runtime_error("the PostgreSQL URI opened another kind of store");
  store_->reset_table();
  sql_check_input in{direct_uri_, table_, s_.items, s_.max_attempts, s_.poison_rate, 0};
  install_pg_audit(in);
  store_->seed(s_.items - s_.items / 50, rng_());
  std::string privates;  // some addresses the API has no data for
  for (std::size_t i = 0; i < s_.items / 50; ++i)
    privates += std::string(privates.empty() ? "" : ", ") + "('10.0." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1) + "')";
  if (!privates.empty()) store_->execute("INSERT INTO " + table_ + " (\"originatingIp\") VALUES " + privates);
  t_.items += s_.items;

  start_api();
  in.poison_seed = poison_seed_;
  run_workers(true);
  stop_api();
  proxy_.reset();
  if (s_.inject) inject_pg_violations(in);
  check_pg(in, round_, t_);
  drop_pg_audit(in);
  store_->execute("DROP TABLE " + table_);
  if (failover) stop_pair();
}

// Each worker names its sessions dibs-<its pid> (the audit's writer, the sessions the server
// terminates): a shell that puts its own pid in the URI, then becomes the worker (exec keeps the pid).
std::vector<std::string> pg_round::worker_command(std::vector<std::string> args) const {
  std::vector<std::string> out{"/bin/sh", "-c",
                               "exec \"$@\" --store " + test::shell_quote(with_param(uri_, "application_name=dibs-")) + "\"$$\"",
                               "sh"};
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

bool pg_round::restart_server() {
  if (s_.store == chaos_store::postgres_failover) {
    fail_over();  // pg_failover.cpp
    ++t_.faults["PostgreSQL failover (primary SIGKILLed, standby promoted)"];
    return true;
  }
  if (const char* uri = std::getenv("POSTGRES_URI"); uri && *uri) return false;  // not ours to restart
  // Started without this process's descriptors (not through system()), like the MariaDB restart.
  test::child_process restart({"bash", DIBS_POSTGRES_CTL, "restart", DIBS_SERVERS_DIR});
  std::string said;
  if (restart.finish(said) != 0) throw std::runtime_error("the PostgreSQL restart failed: " + said);
  ++t_.faults["PostgreSQL restart"];
  return true;
}

void pg_round::store_fault(int which) {
  try {
    if (which == 0) {
      const auto n = terminate_worker_sessions(direct_uri_);
      ++t_.faults["worker sessions terminated by the server (pg_terminate_backend)"];
      t_.faults["(worker sessions so terminated)"] += n;
    } else if (!idle_ || idle_->over()) {
      idle_ = std::make_unique<idle_transaction>(direct_uri_, table_, 25, 3'000ms);
      ++t_.faults["session idle in a transaction holding open rows (3 s)"];
      t_.faults["(open rows so held)"] += idle_->locked();
    }
  } catch (const std::exception& e) {
    // The server may be restarting: the fault is not injected this time.
    std::printf("chaos: round %d: a PostgreSQL fault could not be injected: %s\n", round_, e.what());
  }
}

void pg_round::end_store_faults() { idle_.reset(); }

void pg_round::print_open_items() {
  const auto rows = store_->query_value(
      "SELECT string_agg(concat_ws(' ', id, dibs_lock_by, dibs_lock_token, dibs_lock_until, dibs_attempts, dibs_error), E'\\n') FROM "
      "(SELECT * FROM " + table_ + " WHERE location IS NULL AND dibs_failed_at IS NULL ORDER BY id LIMIT 20) x");
  const auto now = store_->query_value("SELECT now()::text");
  std::printf("chaos: server time %s; open rows (id holder token lease_until attempts error):\n%s\n",
              now.value_or("?").c_str(), rows.value_or("(none)").c_str());
  const auto sessions = store_->query_value(
      "SELECT string_agg(concat_ws(' ', pid, application_name, state, xact_start, wait_event_type, wait_event, "
      "left(query, 120)), E'\\n') FROM pg_stat_activity WHERE backend_type = 'client backend'");
  std::printf("chaos: sessions (pid name state transaction_start wait query):\n%s\n", sessions.value_or("(none)").c_str());
  const auto locks = store_->query_value(
      "SELECT string_agg(concat_ws(' ', pid, mode, granted, relation::regclass), E'\\n') FROM pg_locks "
      "WHERE relation = '" + table_ + "'::regclass");
  std::printf("chaos: locks on the table (pid mode granted):\n%s\n", locks.value_or("(none)").c_str());
}

}  // namespace dibs::chaos
