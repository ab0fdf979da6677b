#include "mysql_connection.hpp"

#include "mysql_endpoint.hpp"
#include "mysql_tls.hpp"
#include "server_errors.hpp"
#include "mysql_protocol.hpp"

#include "engine/src/close_on_exec.hpp"
#include <dibs/log.hpp>
#include "engine/src/server_number.hpp"

#include <mysql.h>
#include <unistd.h>
#include <errmsg.h>

#include <cstdlib>
#include <mutex>

namespace dibs::mysql {

bool sql_error::connection_lost() const { return classify(code) == error_class::link_lost; }
bool sql_error::retry_transaction() const { return classify(code) == error_class::rerun; }

namespace {
std::once_flag g_library;
}  // namespace

mysql_connection::mysql_connection(const mysql_uri& u, const mysql_options& o, std::atomic<std::uint64_t>& sent)
    : sent_(sent) {
  std::call_once(g_library, [] { mysql_library_init(0, nullptr, nullptr); });
  db_ = {mysql_init(nullptr), &mysql_close};
  if (!db_) throw sql_error("mysql_init failed (out of memory)", 0);
  unsigned connect_timeout = static_cast<unsigned>(o.connect_timeout.count());
  unsigned io_timeout = static_cast<unsigned>(o.io_timeout.count());
  ::mysql_options(db(), MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
  ::mysql_options(db(), MYSQL_OPT_READ_TIMEOUT, &io_timeout);
  ::mysql_options(db(), MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
  ::mysql_options(db(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  set_tls_options(db(), u);
  const std::string where = "cannot connect to MySQL/MariaDB at " + endpoint_text(u, std::getenv("MYSQL_UNIX_PORT"));
  if (!mysql_real_connect(db(), u.host.c_str(), u.user.c_str(), u.password.c_str(), u.database.c_str(), u.port,
                          u.socket.empty() ? nullptr : u.socket.c_str(), 0)) {
    const auto code = mysql_errno(db());
    throw sql_error(where + ": " + mysql_error(db()) +
                        (code == CR_SSL_CONNECTION_ERROR ? " (TLS with " + describe_tls(u) + ")" : endpoint_hint(u)),
                    code);
  }
  if (const auto why = tls_shortfall(db(), u); !why.empty()) throw sql_error(where + ": " + why, CR_SSL_CONNECTION_ERROR);
  // The client library opens its socket without SOCK_CLOEXEC: mark it now (see close_on_exec.hpp).
  close_on_exec(static_cast<int>(mysql_get_socket(db())));
  try {
    set_up_session(o);
  } catch (const sql_error& e) {
    // The link went in the session's first statements (a server restarting, a proxy resetting
    // right after the handshake): that is a failed connect too, and says so. Before, the user
    // read only "Server has gone away (error 2006)", with no word of connecting.
    if (classify(e.code) != error_class::link_lost) throw;
    throw sql_error(where + ": the connection was lost while its session was set up (" + e.what() + ")", e.code);
  }
}

mysql_connection::~mysql_connection() = default;

void mysql_connection::set_up_session(const mysql_options& o) {
  // DATETIME values are UTC. @dibs_client_pid names this process to the server, so an audit
  // trigger (the chaos checker's) can tell which process made each write; it costs nothing more.
  execute("SET SESSION time_zone = '+00:00', @dibs_client_pid = " + std::to_string(::getpid()));
  // READ COMMITTED: a claim's index scan then takes no gap locks, which under REPEATABLE READ
  // held up producers' INSERTs and other claims' lease UPDATEs (they move the row's index
  // entry) until the claim committed. Every statement here locks what it reads, by key or
  // with SKIP LOCKED, so no statement relies on a repeatable snapshot.
  const auto logging = select("SELECT @@log_bin, @@SESSION.binlog_format");
  const bool log_bin = !logging.empty() && logging[0].size() == 2 && logging[0][0].value_or("0") == "1";
  const auto format = logging.empty() || logging[0].size() < 2 ? std::string() : logging[0][1].value_or("");
  if (read_committed_allowed(log_bin, format)) {
    execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
  } else {
    static std::once_flag told;
    std::call_once(told, [] {
      log::info("mysql: the server writes its binary log as statements (binlog_format=STATEMENT): sessions stay at "
                "REPEATABLE READ, where claims wait more on gap locks (ROW or MIXED lifts this)");
    });
  }
  if (o.idle_transaction_timeout.count() > 0) {
    try {
      execute("SET SESSION idle_transaction_timeout = " + std::to_string(o.idle_transaction_timeout.count()));
    } catch (const sql_error& e) {
      if (e.code != 1193) throw;  // ER_UNKNOWN_SYSTEM_VARIABLE: MySQL, not MariaDB
    }
  }
}

void mysql_connection::execute(const std::string& sql) {
  sent_.fetch_add(1, std::memory_order_relaxed);
  if (mysql_real_query(db(), sql.data(), sql.size()) != 0) fail(sql);
  // Statements that return rows must be drained even when the caller wants none.
  if (MYSQL_RES* r = mysql_store_result(db())) mysql_free_result(r);
}

std::vector<sql_row> mysql_connection::select(const std::string& sql) {
  sent_.fetch_add(1, std::memory_order_relaxed);
  if (mysql_real_query(db(), sql.data(), sql.size()) != 0) fail(sql);
  MYSQL_RES* r = mysql_store_result(db());
  if (!r) {
    if (mysql_errno(db())) fail(sql);
    return {};
  }
  std::vector<sql_row> out;
  const unsigned n = mysql_num_fields(r);
  while (MYSQL_ROW cells = mysql_fetch_row(r)) {
    unsigned long* lengths = mysql_fetch_lengths(r);
    sql_row x(n);
    for (unsigned i = 0; i < n; ++i)
      if (cells[i]) x[i] = std::string(cells[i], lengths[i]);
    out.push_back(std::move(x));
  }
  mysql_free_result(r);
  return out;
}

std::uint64_t mysql_connection::affected() { return mysql_affected_rows(db()); }

std::string mysql_connection::quote(const std::string& v) {
  std::string out(v.size() * 2 + 3, '\0');
  out[0] = '\'';
  const auto n = mysql_real_escape_string(db(), out.data() + 1, v.data(), v.size());
  out.resize(n + 1);
  out += '\'';
  return out;
}

// The server's words and code make the error; the statement (which may hold data) goes to the
// debug log only.
void mysql_connection::fail(const std::string& sql) {
  const std::string said = mysql_error(db());
  const auto code = mysql_errno(db());
  log::debug("mysql: error ", code, " (", said, ") in: ", sql.substr(0, 2000));
  throw sql_error("MySQL/MariaDB said: " + said + " (error " + std::to_string(code) + ")", code, said);
}

transaction::~transaction() {
  if (!done_) {
    try {
      c_.execute("ROLLBACK");
    } catch (...) {
    }
  }
}

void transaction::commit() {
  c_.execute("COMMIT");
  done_ = true;
}

std::uint64_t to_u64(const std::optional<std::string>& s) { return server_number<std::uint64_t>(s, "MySQL/MariaDB"); }

quote_fn quote_with(mysql_connection& c) {
  return [&c](const std::string& v) { return c.quote(v); };
}

}  // namespace dibs::mysql
