// The PostgreSQL store against a real server that the ctest fixture starts (or POSTGRES_URI),
// what is its own (what every SQL store does: conformance/sql_store.cpp): a shard's calls taking
// turns on its one pipelined connection, NUL bytes, the partial index, killed and silent
// connections, and clear errors.
#include "postgres/pg_env.hpp"
#include "support/run_sync.hpp"

#include <dibs/stores/open_store.hpp>
#include <adapters/postgres/pg_store.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
pg::pg_options options_for(const std::string& table) {
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  return o;
}


std::vector<job> claim_sync(store& s, claim_request r) { return test::run_sync(s.claim(std::move(r))); }
}  // namespace

TEST_CASE("claims from many coroutines of one io_context share its one pipelined connection and never share a row",
          "[postgres]") {
  const auto table = test::unique_pg_table("turns");
  auto s = std::make_shared<pg::pg_store>(options_for(table));
  s->reset_table();
  REQUIRE(s->seed(600, 3) == 600);
  const auto before = std::stoull(s->query_value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dibs'").value_or("0"));
  net::io_context ioc(1);
  std::vector<std::future<std::vector<job>>> claims;
  for (int i = 0; i < 20; ++i) {
    auto one = [s, i]() -> awaitable<std::vector<job>> {
      std::vector<job> all;
      // Named first: g++ 12 destroys a temporary built inside a co_await expression twice.
      const claim_request req{7, "w" + std::to_string(i), 60s, 1s};
      for (;;) {
        auto got = co_await s->claim(req);
        if (got.empty()) co_return all;
        for (auto& j : got) all.push_back(std::move(j));
      }
    };
    claims.push_back(net::co_spawn(ioc, one, net::use_future));
  }
  // The io_context's thread, counting this store's connections while the claims run.
  std::uint64_t during = 0;
  auto count = [s, &during]() -> awaitable<void> {
    auto st = co_await s->stats();
    (void)st;
    during = std::stoull(s->query_value("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dibs'").value_or("0"));
  };
  auto counted = net::co_spawn(ioc, count, net::use_future);
  ioc.run();
  counted.get();
  std::set<std::string> ids;
  std::size_t total = 0;
  for (auto& f : claims)
    for (auto& j : f.get()) {
      ids.insert(j.id);
      ++total;
      CHECK(j.attempts == 1);
    }
  CHECK(total == 600);
  CHECK(ids.size() == 600);
  CHECK(s->stats_blocking().leased_live == 600);
  // One connection for the io_context (besides the admin one counted before).
  CHECK(during == before + 1);
}

TEST_CASE("a PostgreSQL failure whose reason holds a NUL byte is recorded, the byte shown escaped", "[postgres]") {
  pg::pg_store s(options_for(test::unique_pg_table("nul")));
  s.reset_table();
  const auto table = s.names().table;
  s.execute("INSERT INTO " + table + " (\"originatingIp\") VALUES ('1.2.3.4')");
  auto got = claim_sync(s, {1, "w", 60s, 1s});
  REQUIRE(got.size() == 1);
  auto r = test::run_sync(s.fail({failure{got[0].ref(), std::string("the API has no data: a\0b", 24), 200, 1}}));
  CHECK(r.applied == 1);  // before: refused (22P02) every time, so the row was never failed
  CHECK(s.query_value("SELECT dibs_error FROM " + table) == std::optional<std::string>("the API has no data: a\\0b"));
  CHECK(s.stats_blocking().failed == 1);
}

TEST_CASE("a PostgreSQL claim reads the partial index of open rows", "[postgres]") {
  pg::pg_store s(options_for(test::unique_pg_table("plan")));
  s.reset_table();
  const auto table = s.names().table;
  s.execute("SET enable_seqscan = off");  // a tiny table: only say whether the index CAN serve the claim
  auto plan = s.query_value(
      "EXPLAIN (FORMAT JSON) SELECT id FROM " + table +
      " WHERE location IS NULL AND dibs_failed_at IS NULL AND (dibs_lock_until IS NULL OR dibs_lock_until < now()) ORDER BY dibs_lock_until "
      "NULLS FIRST, id LIMIT 10");
  s.execute("RESET enable_seqscan");
  REQUIRE(plan);
  CHECK_THAT(*plan, Catch::Contains(table + "_dibs_open"));
}

TEST_CASE("a bad or unreachable PostgreSQL URI fails at start with a clear message", "[postgres]") {
  pg::pg_options o;
  o.uri = "postgresql://app:secret@127.0.0.1:1/db?table=jobs";
  o.connect_timeout = 2s;
  try {
    pg::pg_store s(o);
    FAIL("connected to a closed port");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::Contains("cannot connect to PostgreSQL") && !Catch::Contains("secret"));
  }
  o.uri = "postgresql://app:secret@127.0.0.1:1/db?table=bad-name";
  CHECK_THROWS_WITH(pg::pg_store(o), Catch::Contains("bad SQL name 'bad-name'"));
  store_options later;
  later.on_done = "later";
  CHECK_THROWS_WITH(open_store(test::postgres_uri_for("x"), later), Catch::Contains("on_done 'later': expected mark or delete"));
  store_options update_find;
  update_find.claim = "update-find";
  CHECK_THROWS_WITH(open_store(test::postgres_uri_for("x"), update_find), Catch::Contains("PostgreSQL stores claim with skip-locked only"));
  // Without create_schema the table must be there already.
  auto missing = options_for(test::unique_pg_table("absent"));
  missing.create_table = false;
  CHECK_THROWS_WITH(pg::pg_store(missing), Catch::Contains("no table 'absent_"));
}

TEST_CASE("a PostgreSQL connection killed by the server is replaced, and the call goes through", "[postgres]") {
  auto s = std::make_shared<pg::pg_store>(options_for(test::unique_pg_table("killed")));
  s->reset_table();
  REQUIRE(s->seed(4, 2) == 4);
  net::io_context ioc(1);
  auto steps = [s]() -> awaitable<std::size_t> {
    const claim_request req{2, "w", 60s, 1s};  // named first (g++ 12 and temporaries in co_await)
    auto first = co_await s->claim(req);
    // Every dibs session but the admin one that asks: the shard's connection dies.
    s->execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'dibs' AND pid <> "
               "pg_backend_pid()");
    auto second = co_await s->claim(req);
    co_return first.size() + second.size();
  };
  auto f = net::co_spawn(ioc, steps, net::use_future);
  ioc.run();
  CHECK(f.get() == 4);
  CHECK(s->stats_blocking().leased_live == 4);
}

TEST_CASE("a server that accepts but never answers fails a shard's connect at its timeout, and the loop runs on meanwhile",
          "[postgres]") {
  // A listening socket nobody accepts from: the kernel completes the handshake, no one speaks.
  net::io_context silent;
  net::ip::tcp::acceptor quiet(silent, net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  pg::connect_settings cs;
  cs.conninfo = "postgresql://nobody@127.0.0.1:" + std::to_string(quiet.local_endpoint().port()) + "/db";
  cs.connect_timeout = 1s;
  net::io_context ioc(1);
  bool ticked = false;
  auto tick = [&ticked]() -> awaitable<void> {
    net::steady_timer t(co_await net::this_coro::executor, 100ms);
    co_await t.async_wait(net::use_awaitable);
    ticked = true;
  };
  auto connect = [cs]() -> awaitable<void> { auto c = co_await pg::pg_connection::connect(cs); };
  auto ticking = net::co_spawn(ioc, tick, net::use_future);
  auto connecting = net::co_spawn(ioc, connect, net::use_future);
  ioc.run();
  ticking.get();
  CHECK(ticked);
  CHECK_THROWS_WITH(connecting.get(), Catch::Contains("did not answer in time"));
}

TEST_CASE("a PostgreSQL URI libpq can't read never shows its password, even with the '@' missing", "[postgres]") {
  // libpq quotes the piece it could not read ("S3cret" as a port), or the whole URI.
  for (const std::string uri : {"postgresql://app:S3cret/db?table=t", "postgresql://app:S3cretpw@[::1/db?table=t",
                                "postgres://app:S3cret@127.0.0.1:9x/db"}) {
    pg::pg_options o;
    o.uri = uri;
    o.connect_timeout = 2s;
    try {
      pg::pg_store s(o);
      FAIL("connected with " << uri);
    } catch (const std::exception& e) {
      INFO(e.what());
      CHECK_THAT(e.what(), Catch::Contains("cannot connect to PostgreSQL at postgres") && !Catch::Contains("S3cret"));
    }
  }
}

TEST_CASE("in a shard's pipeline a refused statement fails alone: the statements around it land", "[postgres]") {
  auto s = std::make_shared<pg::pg_store>(options_for(test::unique_pg_table("pipeline")));
  s->reset_table();
  const auto table = s->names().table;
  s->execute("ALTER TABLE " + table + " ADD CONSTRAINT " + table + "_policy CHECK (NOT (location ? 'refuse'))");
  REQUIRE(s->seed(3, 4) == 3);
  auto got = test::run_sync(s->claim(claim_request{3, "w", 60s, 1s}));
  REQUIRE(got.size() == 3);
  // Three completions sent back to back on one connection, the middle one refused by the CHECK.
  net::io_context ioc(1);
  auto write = [s](job j, std::string answer) -> awaitable<std::size_t> {
    std::vector<completion> batch{completion{j.ref(), std::move(answer)}};
    auto r = co_await s->complete(std::move(batch));
    co_return r.applied;
  };
  auto first = net::co_spawn(ioc, write(got[0], R"({"n":0})"), net::use_future);
  auto refused = net::co_spawn(ioc, write(got[1], R"({"refuse":true})"), net::use_future);
  auto third = net::co_spawn(ioc, write(got[2], R"({"n":2})"), net::use_future);
  ioc.run();
  CHECK(first.get() == 1);
  CHECK_THROWS_AS(refused.get(), store_refused);
  CHECK(third.get() == 1);
  const auto st = s->stats_blocking();
  CHECK(st.done == 2);
  CHECK(st.leased_live == 1);  // the refused one keeps its lease: the engine fails it next
}
