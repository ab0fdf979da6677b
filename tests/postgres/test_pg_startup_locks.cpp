// A worker that starts while another session holds a write transaction on the table open (a
// producer inserting rows in a long transaction) must not wait for it: CREATE INDEX ... IF NOT
// EXISTS takes a SHARE lock on the table even when the index is there, so it would queue behind
// that transaction, and every other worker's claims and writes would queue behind it in turn.
// (Found while writing the PostgreSQL chaos rounds' idle-in-transaction fault.)
#include "postgres/pg_env.hpp"

#include <adapters/postgres/pg_connection.hpp>
#include <adapters/postgres/pg_store.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

TEST_CASE("a store opens on a table while another session's write transaction is open", "[postgres]") {
  const auto table = test::unique_pg_table("startup_locks");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  auto first = std::make_shared<pg::pg_store>(o);
  first->reset_table();

  pg::connect_settings cs;
  cs.conninfo = pg::parse_pg_uri(o.uri).conninfo;
  auto producer = pg::pg_connection::connect_blocking(cs);
  producer->exec_blocking(pg::statement{"BEGIN", {}});
  producer->exec_blocking(pg::statement{"INSERT INTO " + table + " (\"originatingIp\") VALUES ('8.8.8.8')", {}});

  std::promise<void> opened;
  auto done = opened.get_future();
  std::thread second([&] {
    try {
      pg::pg_store s(o);
      opened.set_value();
    } catch (...) {
      opened.set_exception(std::current_exception());
    }
  });
  // A bound, not a speed: a store that waits for the producer's commit never opens before it.
  const bool opened_while_producer_open = done.wait_for(60s) == std::future_status::ready;
  producer->exec_blocking(pg::statement{"COMMIT", {}});
  second.join();
  CHECK(opened_while_producer_open);
  REQUIRE_NOTHROW(done.get());
  CHECK(first->query_value("SELECT count(*) FROM " + table) == "1");
  first->execute("DROP TABLE " + table);
}
