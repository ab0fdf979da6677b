// One libpq connection, driven two ways: without blocking, by the calling coroutine's io_context
// (libpq's non-blocking API and pipeline mode -- PQconnectPoll, PQenterPipelineMode,
// PQsendQueryParams, PQpipelineSync, PQflush, PQconsumeInput, PQisBusy -- and an asio descriptor
// on PQsocket waiting for readiness), so a shard's store calls need no thread; and blocking
// (PQexecParams), for the CLI's seed and status. It only moves bytes:
// the SQL and the meaning of results are pg_protocol's.
#pragma once

#include <adapters/postgres/pg_protocol.hpp>

#include <dibs/net.hpp>

#include <boost/asio/posix/stream_descriptor.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct pg_conn;  // libpq's PGconn

namespace dibs::pg {

// The server (or libpq) said no. `sqlstate` is empty when libpq itself failed (no server answer).
class pg_error : public std::runtime_error {
 public:
  pg_error(const std::string& what, std::string sqlstate, std::string server_message)
      : std::runtime_error(what), sqlstate(std::move(sqlstate)), server_message(std::move(server_message)) {}
  std::string sqlstate;
  std::string server_message;  // the server's own words, without the statement (which may hold data)
};

struct pg_result {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::uint64_t affected = 0;  // rows an INSERT/UPDATE/DELETE touched
};

struct connect_settings {
  std::string conninfo;  // a postgresql:// URI (its own parameters override the defaults below)
  std::chrono::seconds connect_timeout{5};
  std::chrono::seconds io_timeout{60};  // TCP user timeout: a vanished server is noticed
  // The server cancels a statement that runs this long (statement_timeout; 0: the server's own
  // setting). Under io_timeout, so a statement stuck behind a lock is cancelled by the server --
  // the connection lives on, and the statement can't commit later -- before the client gives up.
  std::chrono::milliseconds statement_timeout{0};
};

class pg_connection {
 public:
  ~pg_connection();
  pg_connection(const pg_connection&) = delete;
  pg_connection& operator=(const pg_connection&) = delete;

  static std::unique_ptr<pg_connection> connect_blocking(const connect_settings& s);
  // Connects on the calling coroutine's executor, waiting for the socket, never blocking it.
  static awaitable<std::unique_ptr<pg_connection>> connect(connect_settings s);

  // One statement; rows as text (nullopt for NULL). Throws pg_error.
  pg_result exec_blocking(const statement& st);
  // Several statements without parameters, in one simple-protocol round trip.
  void exec_script_blocking(const std::string& sql);
  // Pipeline mode (libpq 14+): coroutines of one io_context may call this at once; each
  // statement goes out at once, followed by its own sync point (so it is its own transaction and
  // its error touches no other), and the answers are read back in order, each by its caller.
  // Each answer has io_timeout from its turn (the answer before it read), not from its sending:
  // a statement queued behind one that waits for a lock is not timed by that wait.
  // The blocking calls above are for connections that never use this.
  awaitable<pg_result> exec_pipelined(statement st);

  // LISTEN (blocking, on a listener's own thread; the connection runs nothing else): waits up to
  // `timeout` for notifications or for `wake_fd` to become readable, and returns the channels
  // that were notified (none on timeout or wake). Throws pg_error when the link fails.
  std::vector<std::string> await_notifications_blocking(std::chrono::milliseconds timeout, int wake_fd);

  // False once the link failed, or a call on it was abandoned half-way (its answer unread).
  bool usable() const;

 private:
  using deadline = std::chrono::steady_clock::time_point;
  struct slot;  // one pipelined statement waiting for its answer
  explicit pg_connection(pg_conn* c) : conn_(c) {}
  // The connection failed: every statement in the pipeline fails with `e`.
  void fail_pipeline(const pg_error& e);
  // Until the socket is ready; throws pg_error (no SQLSTATE: an outage) once `by` has passed.
  awaitable<void> wait(bool for_write, deadline by);
  [[noreturn]] void fail_link(const std::string& doing);

  pg_conn* conn_;
  bool in_flight_ = false;
  std::chrono::seconds io_timeout_{60};
  bool pipelined_ = false;
  // Pipelined: the socket's descriptor, kept (the connection lives as long as its io_context),
  // and the statements sent whose answers are not read yet, in order.
  std::shared_ptr<net::posix::stream_descriptor> sd_;
  std::deque<slot*> queue_;
};

}  // namespace dibs::pg
