// --max-connections: the client's per-origin connection slots (connection_slots.hpp), what the
// stub sees when 100 callers share 4 connections, a whole engine run under the limit, and the
// flag through the real `dibs demo`.
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <dibs/http/client.hpp>
#include "adapters/http/client/connection_slots.hpp"
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace dibs;
using namespace std::chrono_literals;

TEST_CASE("connection share: the process's limit split across shards, remainder first, at least one each", "[http][max-connections]") {
  CHECK(http::connection_share(4, 2, 0) == 2);
  CHECK(http::connection_share(4, 2, 1) == 2);
  CHECK(http::connection_share(5, 2, 0) == 3);
  CHECK(http::connection_share(5, 2, 1) == 2);
  CHECK(http::connection_share(10, 3, 0) == 4);
  CHECK(http::connection_share(10, 3, 2) == 3);
  CHECK(http::connection_share(1, 1, 0) == 1);
  CHECK(http::connection_share(1, 4, 3) == 1);  // the CLI never runs more shards than connections
  std::size_t sum = 0;
  for (std::size_t i = 0; i < 7; ++i) sum += http::connection_share(1000, 7, i);
  CHECK(sum == 1000);
}

TEST_CASE("bound share: the connections a server served, split over the calling shards, add up to no more", "[http][adaptive]") {
  // Where the bound gives each calling shard one at least, the shares add up to it exactly.
  for (std::size_t calling = 1; calling <= 8; ++calling) {
    for (std::size_t cap = calling; cap <= 40; ++cap) {
      std::size_t sum = 0;
      for (std::size_t rank = 0; rank < calling; ++rank) sum += http::bound_share(cap, calling, rank);
      INFO(cap << " over " << calling << " calling shards");
      CHECK(sum == cap);
    }
  }
  CHECK(http::bound_share(8, 4, 0) == 2);
  CHECK(http::bound_share(8, 4, 3) == 2);
  CHECK(http::bound_share(3, 2, 1) == 1);
  CHECK(http::bound_share(8, 2, 5) == 1);  // a shard not calling finishes what it holds on one
}

TEST_CASE("limit share: the calls a parked shard runs on its floor come out of the calling shards' shares", "[http][adaptive]") {
  // A limit of 2 on one of two shards, the other parked running an item it held on its floor of
  // one: 1 and 1, not 2 and 1 (a token bucket at its rate refused the third call a round).
  CHECK(http::limit_share(2, 2, 0, SIZE_MAX, 1) == 1);
  CHECK(http::limit_share(4, 2, 0, SIZE_MAX, 1) == 3);
  // A calling shard keeps one at least: at a limit of 1 the parked call is beside it.
  CHECK(http::limit_share(1, 2, 0, SIZE_MAX, 1) == 1);
  CHECK(http::limit_share(2, 2, 1, SIZE_MAX, 1) == 0);  // the parked one's share stays 0 (its floor is the client's)
  for (std::size_t limit = 1; limit < 100; ++limit)
    for (std::size_t beside = 0; beside < 8; ++beside) {
      std::size_t sum = 0, calling = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        const auto share = http::limit_share(limit, 8, i, SIZE_MAX, beside);
        sum += share;
        calling += share > 0 ? 1 : 0;
      }
      INFO(limit << " with " << beside << " beside");
      CHECK(sum == std::max(limit - std::min(beside, limit), calling));
      CHECK(calling == http::calling_shards(limit, 8));
    }
}

TEST_CASE("limit share: a limit on calls goes to as few shards as it fills, none for the others", "[http][adaptive]") {
  static_assert(http::calls_per_shard == 4);
  // A limit of 1 with two shards: one call, not one per shard (the other shard is parked).
  CHECK(http::limit_share(1, 2, 0) == 1);
  CHECK(http::limit_share(1, 2, 1) == 0);
  // A handful of calls on one shard: a second thread would only take a core from a small API.
  CHECK(http::limit_share(3, 8, 0) == 3);
  CHECK(http::limit_share(3, 8, 1) == 0);
  CHECK(http::limit_share(7, 2, 0) == 7);
  CHECK(http::limit_share(7, 2, 1) == 0);
  // Past four calls a shard, spread evenly over as many shards as get four.
  CHECK(http::limit_share(9, 2, 0) == 5);
  CHECK(http::limit_share(9, 2, 1) == 4);
  CHECK(http::limit_share(13, 8, 0) == 5);
  CHECK(http::limit_share(13, 8, 2) == 4);
  CHECK(http::limit_share(13, 8, 3) == 0);
  CHECK(http::limit_share(1000, 8, 7) == 125);
  for (std::size_t limit = 0; limit < 100; ++limit) {
    std::size_t sum = 0, calling = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      const auto share = http::limit_share(limit, 8, i);
      sum += share;
      if (share > 0) {
        ++calling;
        CHECK((share >= http::calls_per_shard || calling == 1));  // only a lone shard has fewer
      }
    }
    CHECK(sum == limit);
  }
}

TEST_CASE("limit share: no shard is asked for more than it may run (its part of --concurrency and --max-connections)", "[http][adaptive]") {
  // --concurrency 8 on two shards: 4 each at most; a limit of 7 all on one would run 4.
  CHECK(http::calling_shards(7, 2, 4) == 2);
  CHECK(http::limit_share(7, 2, 0, 4) == 4);
  CHECK(http::limit_share(7, 2, 1, 4) == 3);
  CHECK(http::limit_share(5, 2, 0, 1000) == 5);  // the default ceiling: no such bound
  CHECK(http::calling_shards(3, 8, 1) == 3);      // one call a shard at most
  for (const std::size_t most : {1, 2, 3, 4, 5, 8, 125}) {
    for (std::size_t limit = 1; limit <= 8 * most; ++limit) {  // a limit is never 0
      std::size_t sum = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        const auto share = http::limit_share(limit, 8, i, most);
        CHECK(share <= most);
        CHECK((share == 0) == (i >= http::calling_shards(limit, 8, most)));
        sum += share;
      }
      CHECK(sum == limit);
    }
  }
}

TEST_CASE("connect share: new connections go to the shards calling, one to each other shard", "[http][adaptive]") {
  CHECK(http::connect_share(7, 1, 0) == 7);  // a limit of 7 on one shard of two: it may open them all
  CHECK(http::connect_share(7, 1, 1) == 1);  // the parked one finishes what it holds
  CHECK(http::connect_share(9, 2, 0) == 5);
  CHECK(http::connect_share(9, 2, 1) == 4);
  CHECK(http::connect_share(1, 2, 1) == 1);  // never 0: a calling shard can always open one
}

TEST_CASE("connection slots: a full pool makes callers wait, served first come first served, and a cancelled waiter leaves", "[http][max-connections]") {
  net::io_context ioc(1);
  http::connection_slots slots(2);
  http::connection_slots::held a, b, c;
  REQUIRE(slots.try_take(a));
  REQUIRE(slots.try_take(b));
  CHECK_FALSE(slots.try_take(c));
  CHECK(slots.in_use() == 2);

  std::vector<int> order;
  std::vector<http::connection_slots::held> got(3);
  std::vector<int> results(3, -1);
  net::cancellation_signal cancel_second;
  auto waiter = [&](int n) -> awaitable<void> {
    const bool ok = co_await slots.wait(got[n]) == http::connection_slots::wait_end::slot;
    results[n] = ok ? 1 : 0;
    if (ok) order.push_back(n);
  };
  net::co_spawn(ioc, waiter(0), net::detached);
  net::co_spawn(ioc, waiter(1), net::bind_cancellation_slot(cancel_second.slot(), net::detached));
  net::co_spawn(ioc, waiter(2), net::detached);
  ioc.poll();
  CHECK(slots.waiting() == 3);
  // A newcomer does not overtake the queue even when a slot frees: it goes to the first waiter.
  cancel_second.emit(net::cancellation_type::terminal);
  ioc.poll();
  CHECK(results[1] == 0);
  CHECK(slots.waiting() == 2);
  a.reset();
  CHECK_FALSE(slots.try_take(c));
  ioc.poll();
  CHECK(results[0] == 1);
  CHECK(results[2] == -1);
  b.reset();
  ioc.poll();
  CHECK(results[2] == 1);
  CHECK(order == std::vector<int>{0, 2});
  CHECK(slots.in_use() == 2);
  got[0].reset();
  got[2].reset();
  CHECK(slots.in_use() == 0);
  CHECK(slots.waiting() == 0);
}

TEST_CASE("connection slots: wake_first wakes the first waiter without a slot and takes it off the queue", "[http][max-connections]") {
  net::io_context ioc(1);
  http::connection_slots slots(1);
  http::connection_slots::held a;
  REQUIRE(slots.try_take(a));
  CHECK_FALSE(slots.wake_first());  // nobody waits
  std::vector<http::connection_slots::held> got(2);
  std::vector<http::connection_slots::wait_end> ends(2, http::connection_slots::wait_end::cancelled);
  std::vector<bool> done(2, false);
  auto waiter = [&](int n) -> awaitable<void> {
    ends[n] = co_await slots.wait(got[n]);
    done[n] = true;
  };
  net::co_spawn(ioc, waiter(0), net::detached);
  net::co_spawn(ioc, waiter(1), net::detached);
  ioc.poll();
  REQUIRE(slots.waiting() == 2);
  CHECK(slots.wake_first());
  ioc.poll();
  CHECK(done[0]);
  CHECK(ends[0] == http::connection_slots::wait_end::woken);
  CHECK_FALSE(got[0]);  // no slot: the slot in use is still a's
  CHECK_FALSE(done[1]);
  CHECK(slots.waiting() == 1);
  CHECK(slots.in_use() == 1);
  a.reset();  // the slot goes to the one still waiting
  ioc.poll();
  CHECK(ends[1] == http::connection_slots::wait_end::slot);
  CHECK(got[1]);
  got[1].reset();
  CHECK(slots.in_use() == 0);
}

TEST_CASE("max connections: 100 concurrent requests to one origin open at most 4 connections, and all are answered", "[http][max-connections]") {
  stub::ipapi_stub stub(stub::stub_options::loopback(5ms));
  stub.start();
  net::io_context ioc(1);
  http::client_options o;
  o.max_connections_per_host = 4;
  http::client client(ioc.get_executor(), o);
  int ok = 0, failed = 0;
  auto call = [&](int i) -> awaitable<void> {
    auto to = http::origin{"127.0.0.1", stub.port(), false};
    auto r = co_await client.get(std::move(to), "/json/8.8.8." + std::to_string(i % 250));
    (r.ec || r.status != 200 ? failed : ok)++;
  };
  for (int i = 0; i < 100; ++i) net::co_spawn(ioc, call(i), net::detached);
  ioc.run();
  CHECK(ok == 100);
  CHECK(failed == 0);
  CHECK(stub.peak_connections() <= 4);
  CHECK(client.stats().connects <= 4);
  CHECK(client.stats().connection_waits >= 96);  // everyone past the first four waited
  CHECK(client.idle_connections() <= 4);
  stub.stop();
}

namespace {
// A whole run on the memory store: `docs` documents, `concurrency` pipelines over 2 shards.
std::uint64_t engine_run_peak(std::size_t docs, std::size_t concurrency, std::size_t max_connections,
                              std::uint64_t& completed) {
  stub::ipapi_stub stub(stub::stub_options::loopback(10ms));
  stub.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(docs, 7);
  engine_config cfg;
  cfg.shards = 2;
  cfg.concurrency = concurrency;
  cfg.claim_batch = 50;
  cfg.lease = 60s;
  http::processor_options p;
  p.url = http::url_template::parse(stub.base_url() + "/json/{originatingIp}");
  p.max_connections = max_connections;
  p.shards = cfg.shards;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  completed = e.summary().completed;
  const auto peak = stub.peak_connections();
  stub.stop();
  return peak;
}
}  // namespace

TEST_CASE("max connections: 100 pipelines over 2 shards with --max-connections 4 finish every document on at most 4 connections", "[http][max-connections]") {
  std::uint64_t completed = 0;
  CHECK(engine_run_peak(600, 100, 4, completed) <= 4);
  CHECK(completed == 600);
  // Without the limit the same run opens a connection per busy pipeline: the check above can fail.
  CHECK(engine_run_peak(600, 100, 0, completed) > 4);
  CHECK(completed == 600);
}

TEST_CASE("dibs demo --max-connections: the stub serves every document on at most that many connections", "[cli][max-connections]") {
  dibs::test::child_process p({dibs::test::dibs_binary(), "demo", "--docs", "500", "--concurrency", "100", "--max-connections", "4",
                               "--latency-ms", "5", "--no-progress", "--samples", "0"},
                              /*merge_stderr=*/true);
  std::string out;
  const int rc = p.finish(out);
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("demo: 500 done, 0 failed"));
  // Kept-alive connections: four at most, opened once each.
  const auto at = out.find("requests on ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoul(out.substr(at + 12)) <= 4);
}

TEST_CASE("dibs demo --max-connections below the shard count runs that many shards", "[cli][max-connections]") {
  dibs::test::child_process p({dibs::test::dibs_binary(), "demo", "--docs", "50", "--shards", "2", "--concurrency", "10",
                               "--max-connections", "1", "--no-progress", "--samples", "0"},
                              /*merge_stderr=*/true);
  std::string out;
  const int rc = p.finish(out);
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("1 shard(s)"));
  CHECK_THAT(out, Catch::Contains("demo: 50 done"));
  const auto at = out.find("requests on ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoul(out.substr(at + 12)) == 1);
}
