#include "mysql_round.hpp"

#include "sql_checker.hpp"
#include "support/mysql_env.hpp"

#include <dibs/stores/open_store.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace dibs::chaos {

void mysql_round::run() {
  table_ = test::unique_table("chaos");
  direct_uri_ = direct_uri_for(table_);  // the driver itself goes straight to the server
  uri_ = direct_uri_;
  if (s_.proxy) {  // the workers through the proxy: the URI's host replaced
    const auto where = parse_store_uri(direct_uri_);
    proxy_ = std::make_unique<test::tcp_proxy>(where.host, where.port);
    uri_ = where.with_hosts("127.0.0.1:" + std::to_string(proxy_->port()));
  }
  store_ = std::dynamic_pointer_cast<mysql::mysql_store>(open_store(direct_uri_));
  if (!store_) throw std::runtime_error("the MySQL URI opened another kind of store");
  store_->reset_table();
  sql_check_input in{direct_uri_, table_, s_.items, s_.max_attempts, s_.poison_rate, 0};
  install_audit(in);
  store_->seed(s_.items - s_.items / 50, rng_());
  for (std::size_t i = 0; i < s_.items / 50; ++i)  // some addresses the API has no data for
    store_->execute("INSERT INTO " + table_ + " (originatingIp) VALUES ('10.0." + std::to_string(i / 200) + "." +
                    std::to_string(i % 200 + 1) + "')");
  t_.items += s_.items;

  start_api();
  in.poison_seed = poison_seed_;
  run_workers(true);
  stop_api();
  proxy_.reset();
  if (s_.inject) inject_violations(in);
  check_mysql(in, round_, t_);
  drop_audit(in);
  store_->execute("DROP TABLE " + table_);
}

std::string mysql_round::direct_uri_for(const std::string& table) const { return test::mysql_uri_for(table); }

bool mysql_round::restart_server() {
  if (std::getenv("MYSQL_URI")) return false;  // not ours to restart
  test::restart_mariadb();
  ++t_.faults["MariaDB restart"];
  return true;
}

void mysql_round::print_open_items() {
  const auto rows = store_->query_value(
      "SELECT GROUP_CONCAT(CONCAT_WS(' ', id, dibs_lock_by, dibs_lock_token, dibs_lock_until, dibs_attempts, dibs_error) SEPARATOR '\n') FROM "
      "(SELECT * FROM " + table_ + " WHERE location IS NULL AND dibs_failed_at IS NULL ORDER BY id LIMIT 20) x");
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
}

}  // namespace dibs::chaos
