#include "pg_connection.hpp"

#include "engine/src/close_on_exec.hpp"
#include <dibs/log.hpp>
#include "engine/src/server_number.hpp"
#include "engine/src/uri_redact.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <libpq-fe.h>

#include <fcntl.h>
#include <poll.h>

namespace dibs::pg {

namespace {
PGconn* raw(pg_conn* c) { return reinterpret_cast<PGconn*>(c); }

std::string trimmed(const char* s) {
  std::string out = s ? s : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// NOTICEs (CREATE TABLE IF NOT EXISTS "already exists, skipping") would go to stderr raw.
void quiet_notice(void*, const char* message) { log::debug("postgresql: ", trimmed(message)); }

// Defaults first: with expand_dbname, what the URI says overrides them.
struct connect_params {
  explicit connect_params(const connect_settings& s)
      : timeout(std::to_string(s.connect_timeout.count())),
        user_timeout(std::to_string(s.io_timeout.count() * 1000)),
        options(s.statement_timeout.count() > 0 ? "-c statement_timeout=" + std::to_string(s.statement_timeout.count()) : ""),
        keywords{"connect_timeout", "tcp_user_timeout", "keepalives_idle", "application_name", "options", "dbname", nullptr},
        values{timeout.c_str(), user_timeout.c_str(), "30", "dibs", options.c_str(), s.conninfo.c_str(), nullptr} {
    if (options.empty()) {  // no options of ours: the server's (or the URI's) own
      keywords[4] = "dbname";
      values[4] = s.conninfo.c_str();
      keywords[5] = nullptr;
      values[5] = nullptr;
    }
  }
  std::string timeout, user_timeout, options;
  const char* keywords[7];
  const char* values[7];
};

void prepare(PGconn* c) {
  PQsetNoticeProcessor(c, quiet_notice, nullptr);
  close_on_exec(PQsocket(c));
}

[[noreturn]] void refused_connect(PGconn* c, const std::string& uri) {
  // libpq quotes the URI, or the piece it could not read (a password, when the '@' is missing),
  // in its messages: such a message is withheld, and the URI shown without its secrets.
  const std::string why = redact_driver_message(trimmed(PQerrorMessage(c)), uri);
  PQfinish(c);
  throw pg_error("cannot connect to PostgreSQL at " + redact_uri(uri) + ": " + why, "08001", why);
}

// Turns one PGresult into rows, or throws the server's error (after it is freed).
void take(PGresult* r, pg_result& out, std::optional<pg_error>& error) {
  std::unique_ptr<PGresult, decltype(&PQclear)> owned(r, &PQclear);
  switch (PQresultStatus(r)) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK: {
      const char* n = PQcmdTuples(r);
      if (n && *n) out.affected = server_number<std::uint64_t>(std::string(n), "PostgreSQL");
      const int rows = PQntuples(r), cols = PQnfields(r);
      for (int i = 0; i < rows; ++i) {
        std::vector<std::optional<std::string>> row(cols);
        for (int j = 0; j < cols; ++j)
          if (!PQgetisnull(r, i, j)) row[j] = std::string(PQgetvalue(r, i, j), PQgetlength(r, i, j));
        out.rows.push_back(std::move(row));
      }
      return;
    }
    default: {
      if (error) return;  // the first error is the one that explains
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      std::string message = trimmed(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
      if (message.empty()) message = trimmed(PQresultErrorMessage(r));
      const std::string sqlstate = state ? state : "";
      error.emplace(message + (sqlstate.empty() ? "" : " (SQLSTATE " + sqlstate + ")"), sqlstate, message);
    }
  }
}

struct param_pointers {
  explicit param_pointers(const statement& st) {
    for (const auto& p : st.params) values.push_back(p ? p->c_str() : nullptr);
  }
  std::vector<const char*> values;
};
}  // namespace

pg_connection::~pg_connection() {
  sd_.reset();  // closes its own copy of the socket (see exec_pipelined); libpq closes the socket
  PQfinish(raw(conn_));
}

bool pg_connection::usable() const { return !in_flight_ && PQstatus(raw(conn_)) == CONNECTION_OK; }

void pg_connection::fail_link(const std::string& doing) {
  in_flight_ = true;  // whatever was sent is unread: this connection is done
  const std::string why = trimmed(PQerrorMessage(raw(conn_)));
  throw pg_error("PostgreSQL connection failed while " + doing + ": " + why, "", why);
}

std::unique_ptr<pg_connection> pg_connection::connect_blocking(const connect_settings& s) {
  connect_params p(s);
  PGconn* c = PQconnectdbParams(p.keywords, p.values, 1);
  if (!c) throw pg_error("cannot connect to PostgreSQL: out of memory", "08001", "out of memory");
  if (PQstatus(c) != CONNECTION_OK) refused_connect(c, s.conninfo);
  prepare(c);
  return std::unique_ptr<pg_connection>(new pg_connection(reinterpret_cast<pg_conn*>(c)));
}

awaitable<std::unique_ptr<pg_connection>> pg_connection::connect(connect_settings s) {
  connect_params p(s);
  PGconn* c = PQconnectStartParams(p.keywords, p.values, 1);
  if (!c) throw pg_error("cannot connect to PostgreSQL: out of memory", "08001", "out of memory");
  // Owned at once, so an abandoned connect still closes its socket.
  std::unique_ptr<pg_connection> out(new pg_connection(reinterpret_cast<pg_conn*>(c)));
  if (PQstatus(c) == CONNECTION_BAD) {
    out->conn_ = nullptr;  // refused_connect finishes `c`; `out` itself is still freed
    refused_connect(c, s.conninfo);
  }
  // libpq's own connect_timeout holds only for its blocking connect: this one keeps its own.
  const auto by = std::chrono::steady_clock::now() + s.connect_timeout;
  out->io_timeout_ = s.io_timeout;
  // The poll loop of PQconnectPoll's documentation: it starts as if the socket were writable.
  for (PostgresPollingStatusType st = PGRES_POLLING_WRITING;;) {
    if (st == PGRES_POLLING_OK) break;
    if (st == PGRES_POLLING_FAILED) {
      out->conn_ = nullptr;  // (the same: the connection object was leaked here before)
      refused_connect(c, s.conninfo);
    }
    co_await out->wait(st == PGRES_POLLING_WRITING, by);
    st = PQconnectPoll(c);
  }
  prepare(c);
  if (PQsetnonblocking(c, 1) != 0) out->fail_link("switching to non-blocking mode");
  co_return out;
}

awaitable<void> pg_connection::wait(bool for_write, deadline by) {
  const auto ex = co_await net::this_coro::executor;
  // Pipelined, the connection's own descriptor; otherwise one for this wait only, released (not
  // closed: libpq owns the socket) when it ends, however it ends, so that nothing of it outlives
  // the wait.
  auto sd = sd_ ? sd_ : std::make_shared<net::posix::stream_descriptor>(ex, PQsocket(raw(conn_)));
  struct give_back {
    net::posix::stream_descriptor& sd;
    bool own;
    ~give_back() {
      if (own) sd.release();
    }
  } guard{*sd, !sd_};
  // The deadline cancels the wait. The timer's handler may run after the wait ended: it acts
  // only while this wait is still on.
  struct wait_state {
    std::weak_ptr<net::posix::stream_descriptor> sd;
    bool on = true;
    bool timed_out = false;
  };
  auto state = std::make_shared<wait_state>(wait_state{sd, true, false});
  net::steady_timer timer(ex, by);
  auto expire = [state](boost::system::error_code ec) {
    if (ec || !state->on) return;
    state->timed_out = true;
    if (auto live = state->sd.lock()) live->cancel();
  };
  timer.async_wait(expire);
  auto [ec] = co_await sd->async_wait(for_write ? net::posix::descriptor_base::wait_write
                                                : net::posix::descriptor_base::wait_read,
                                      net::as_tuple(net::use_awaitable));
  state->on = false;
  timer.cancel();
  if (state->timed_out) {
    in_flight_ = true;  // whatever was sent is unread: this connection is done
    throw pg_error("PostgreSQL did not answer in time", "", "timed out");
  }
  if (ec) throw boost::system::system_error(ec, "waiting for the PostgreSQL socket");
}

struct pg_connection::slot {
  pg_result out;
  std::optional<pg_error> error;
  bool done = false;
  net::steady_timer* wake = nullptr;  // set while waiting for its turn to read
};

void pg_connection::fail_pipeline(const pg_error& e) {
  in_flight_ = true;  // this connection is done
  for (auto* s : queue_) {
    if (s->done) continue;
    s->error = e;
    s->done = true;
    if (s->wake) s->wake->cancel();
  }
  queue_.clear();
}

awaitable<pg_result> pg_connection::exec_pipelined(statement st) {
  PGconn* c = raw(conn_);
  const auto ex = co_await net::this_coro::executor;
  auto by = std::chrono::steady_clock::now() + io_timeout_;  // to send; reading counts from its turn
  if (!usable()) throw pg_error("PostgreSQL connection unusable", "", "the connection failed before");
  if (!pipelined_) {
    if (!PQenterPipelineMode(c)) fail_link("entering pipeline mode");
    // A copy of the socket for the event loop, closed with this connection: when the server goes
    // away libpq closes its socket at once, and a new connection may get the same number while
    // this one still waits to be destroyed. Had the loop watched libpq's own number, releasing it
    // then would take the new connection's socket off the loop: after a PostgreSQL failover a
    // worker's first statement on the promoted server waited out the 60 s I/O timeout, unanswered,
    // its leases expired meanwhile, and the other worker called their items again.
    const int copy = ::fcntl(PQsocket(c), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) fail_link("copying its socket");
    sd_ = std::make_shared<net::posix::stream_descriptor>(ex, copy);
    pipelined_ = true;
  }
  slot me;
  {
    param_pointers p(st);
    if (!PQsendQueryParams(c, st.sql.c_str(), static_cast<int>(p.values.size()), nullptr, p.values.data(), nullptr,
                           nullptr, 0) ||
        !PQpipelineSync(c)) {
      const std::string why = trimmed(PQerrorMessage(c));
      fail_pipeline(pg_error("PostgreSQL connection failed while sending a statement: " + why, "", why));
      throw pg_error("PostgreSQL connection failed while sending a statement: " + why, "", why);
    }
  }
  queue_.push_back(&me);
  // However this call ends before its answer is read (cancelled, its frame destroyed), the
  // answers behind it can no longer be told apart: the whole pipeline fails, and the connection.
  struct leave {
    pg_connection& self;
    slot& me;
    ~leave() {
      if (!me.done) self.fail_pipeline(pg_error("a pipelined statement was abandoned", "", "abandoned"));
    }
  } guard{*this, me};
  for (;;) {
    const int f = PQflush(c);
    if (f == 0) break;
    if (f < 0) {
      const std::string why = trimmed(PQerrorMessage(c));
      fail_pipeline(pg_error("PostgreSQL connection failed while sending a statement: " + why, "", why));
      break;
    }
    co_await wait(true, by);
  }
  // My turn to read comes when every statement sent before mine has read its answer.
  while (!me.done && queue_.front() != &me) {
    net::steady_timer turn(ex, net::steady_timer::time_point::max());
    me.wake = &turn;
    co_await turn.async_wait(net::as_tuple(net::use_awaitable));
    me.wake = nullptr;
    if ((co_await net::this_coro::cancellation_state).cancelled() != net::cancellation_type::none)
      throw boost::system::system_error(net::error::operation_aborted, "waiting for a PostgreSQL answer");
  }
  if (!me.done) {
    // Its turn: the statements before it have answered, so the server is on this one now.
    by = std::chrono::steady_clock::now() + io_timeout_;
    // One statement's results, a NULL, then its sync point.
    int nulls = 0;
    for (;;) {
      while (PQisBusy(c)) {
        co_await wait(false, by);
        if (!PQconsumeInput(c)) break;
      }
      if (PQstatus(c) != CONNECTION_OK || (PQisBusy(c) && !PQconsumeInput(c))) {
        const std::string why = trimmed(PQerrorMessage(c));
        fail_pipeline(pg_error("PostgreSQL connection failed while reading an answer: " + why, "", why));
        break;
      }
      PGresult* r = PQgetResult(c);
      if (!r) {
        if (++nulls > 2) {
          fail_pipeline(pg_error("PostgreSQL pipeline out of step", "", "out of step"));
          break;
        }
        continue;
      }
      const auto status = PQresultStatus(r);
      if (status == PGRES_PIPELINE_SYNC) {
        PQclear(r);
        me.done = true;
        queue_.pop_front();
        if (!queue_.empty() && queue_.front()->wake) queue_.front()->wake->cancel();
        break;
      }
      if (status == PGRES_PIPELINE_ABORTED) {
        PQclear(r);
        continue;
      }
      take(r, me.out, me.error);
    }
  }
  if (me.error) throw *me.error;
  co_return std::move(me.out);
}

pg_result pg_connection::exec_blocking(const statement& st) {
  param_pointers p(st);
  PGresult* r = PQexecParams(raw(conn_), st.sql.c_str(), static_cast<int>(p.values.size()), nullptr, p.values.data(),
                             nullptr, nullptr, 0);
  if (!r) fail_link("running a statement");
  pg_result out;
  std::optional<pg_error> error;
  take(r, out, error);
  if (error) throw *error;
  return out;
}

void pg_connection::exec_script_blocking(const std::string& sql) {
  PGresult* r = PQexec(raw(conn_), sql.c_str());
  if (!r) fail_link("running a statement");
  pg_result out;
  std::optional<pg_error> error;
  take(r, out, error);
  if (error) throw *error;
}

std::vector<std::string> pg_connection::await_notifications_blocking(std::chrono::milliseconds timeout, int wake_fd) {
  PGconn* c = raw(conn_);
  std::vector<std::string> channels;
  auto drain = [&] {
    while (PGnotify* n = PQnotifies(c)) {
      channels.emplace_back(n->relname);
      PQfreemem(n);
    }
  };
  drain();  // some may have arrived with the answer to LISTEN itself
  if (!channels.empty()) return channels;
  pollfd fds[2] = {{PQsocket(c), POLLIN, 0}, {wake_fd, POLLIN, 0}};
  const int ready = ::poll(fds, wake_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (ready < 0) return channels;  // EINTR: the caller loops
  if (fds[0].revents != 0) {
    if (!PQconsumeInput(c)) fail_link("waiting for notifications");
    drain();
  }
  return channels;
}

}  // namespace dibs::pg
