// Time limits on a real PostgreSQL: a pipelined statement is given its read deadline from its own
// turn (not from when it was sent, behind another one's lock wait), and a statement stuck past
// the store's limit is cancelled by the server itself, so it can't commit after dibs gave up.
#include "postgres/pg_env.hpp"
#include "support/run_sync.hpp"

#include <adapters/postgres/pg_connection.hpp>
#include <adapters/postgres/pg_store.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
pg::connect_settings settings(std::chrono::seconds io_timeout) {
  pg::connect_settings s;
  s.conninfo = pg::parse_pg_uri(test::postgres_uri_for("unused")).conninfo;
  s.io_timeout = io_timeout;
  return s;
}

// A row locked by another session's open transaction until unlock().
struct held_row {
  std::unique_ptr<pg::pg_connection> c;
  held_row(const std::string& table, const std::string& where) : c(pg::pg_connection::connect_blocking(settings(60s))) {
    c->exec_script_blocking("BEGIN; SELECT 1 FROM " + table + " WHERE " + where + " FOR UPDATE");
  }
  void unlock() { c->exec_script_blocking("COMMIT"); }
};

std::string lock_waiters(pg::pg_store& s) {
  return s.query_value("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")
      .value_or("?");
}
}  // namespace

TEST_CASE("a pipelined PostgreSQL statement queued behind a lock wait is timed from its own turn", "[postgres][deadlines]") {
  const auto table = test::unique_pg_table("turns");
  pg::pg_store admin([&] {
    pg::pg_options o;
    o.uri = test::postgres_uri_for(table);
    return o;
  }());
  admin.execute("CREATE TABLE " + table + "_rows (id int PRIMARY KEY, v int); INSERT INTO " + table + "_rows VALUES (1, 0)");
  held_row lock(table + "_rows", "id = 1");

  net::io_context ioc;
  std::unique_ptr<pg::pg_connection> conn;
  auto connect = [&]() -> awaitable<void> { conn = co_await pg::pg_connection::connect(settings(2s)); };
  net::co_spawn(ioc, connect(), net::detached);
  ioc.run();
  ioc.restart();
  REQUIRE(conn);
  // First: an UPDATE that waits 1.5 s for the row's lock (its own deadline is 2 s: it makes it).
  // Then, sent at once behind it: a statement of 1.2 s. Timed from its sending it would be given
  // until 2 s and time out at once; from its turn (1.5 s) it has until 3.5 s.
  auto first = net::co_spawn(ioc, conn->exec_pipelined({"UPDATE " + table + "_rows SET v = 1 WHERE id = 1", {}}), net::use_future);
  auto second = net::co_spawn(ioc, conn->exec_pipelined({"SELECT pg_sleep(1.2)", {}}), net::use_future);
  net::steady_timer release(ioc, 1500ms);
  release.async_wait([&](boost::system::error_code) { lock.unlock(); });
  ioc.run();
  CHECK_NOTHROW(first.get());
  CHECK_NOTHROW(second.get());
  CHECK(conn->usable());
  CHECK(admin.query_value("SELECT v FROM " + table + "_rows") == std::optional<std::string>("1"));
  conn.reset();
  admin.execute("DROP TABLE " + table + "_rows");
}

TEST_CASE("a PostgreSQL write stuck behind a lock past the store's limit is cancelled by the server, not left to commit",
          "[postgres][deadlines]") {
  const auto table = test::unique_pg_table("stuck");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  o.io_timeout = 2s;
  auto s = std::make_shared<pg::pg_store>(o);
  s->reset_table();
  REQUIRE(s->seed(1, 1) == 1);
  auto jobs = test::run_sync(s->claim(claim_request{1, "w-1", 60s, 1s}));
  REQUIRE(jobs.size() == 1);
  held_row lock(table, "true");
  // The completion waits for the row; the store gives up on it -- and so must the server: once
  // the call has failed nothing of it may still wait there, or it would write when the lock goes.
  CHECK_THROWS(test::run_sync(s->complete({completion{jobs[0].ref(), R"({"late":true})"}})));
  CHECK(lock_waiters(*s) == "0");
  lock.unlock();
  CHECK(s->query_value("SELECT count(*) FROM " + table + " WHERE location IS NOT NULL") == std::optional<std::string>("0"));
  // The lease still holds: the next write lands.
  CHECK(test::run_sync(s->complete({completion{jobs[0].ref(), R"({"on":"time"})"}})).applied == 1);
}

TEST_CASE("a PostgreSQL connection that replaced one the server closed still hears its answers once the old one goes",
          "[postgres][deadlines]") {
  // libpq closes a dead connection's socket at once, and the next connection gets its number
  // while the old connection object lives on (a coroutine still holds it). Destroyed then, the old
  // one must not take the new socket off the event loop: after a failover a worker's first
  // statement on the promoted server waited out the I/O timeout unanswered, and its leases expired.
  pg::pg_store admin([&] {
    pg::pg_options o;
    o.uri = test::postgres_uri_for(test::unique_pg_table("renumbered"));
    return o;
  }());
  net::io_context ioc;
  std::optional<std::string> answer;
  bool old_failed = false;
  // (Statements named before each co_await: g++ 12 frees a braced temporary in one twice.)
  auto run = [&]() -> awaitable<void> {
    auto old_conn = co_await pg::pg_connection::connect(settings(3s));
    pg::statement whose{"SELECT pg_backend_pid()", {}}, one{"SELECT 1", {}}, slow{"SELECT 'heard' FROM pg_sleep(0.2)", {}};
    const auto pid = co_await old_conn->exec_pipelined(whose);
    admin.execute("SELECT pg_terminate_backend(" + *pid.rows.at(0).at(0) + ")");
    try {
      co_await old_conn->exec_pipelined(one);
    } catch (const pg::pg_error&) {
      old_failed = true;
    }
    auto new_conn = co_await pg::pg_connection::connect(settings(3s));
    co_await new_conn->exec_pipelined(one);  // its socket joins the event loop
    old_conn.reset();
    // An answer that takes a wait on the socket.
    const auto heard = co_await new_conn->exec_pipelined(slow);
    answer = heard.rows.at(0).at(0);
  };
  auto done = net::co_spawn(ioc, run(), net::use_future);
  ioc.run();
  CHECK_NOTHROW(done.get());
  CHECK(old_failed);
  CHECK(answer == std::optional<std::string>("heard"));
}
