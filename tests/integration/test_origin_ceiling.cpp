// An API origin's adaptive limit has one ceiling for the whole run, the engine's --concurrency,
// whichever shard asks first and however --concurrency splits among the shards; POST
// /concurrency (engine::set_concurrency) moves it to the new whole. Each shard computed it from
// its own part (its share x the shards) and the first one to ask kept its figure: --concurrency 3
// on two shards came out 4 or 2, never 3, and 5 came out 6.
#include <dibs/engine.hpp>
#include <dibs/http/client.hpp>
#include <dibs/http/http_figures.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>
#include <dibs/stores/memory_store.hpp>

#include "support/eventually.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
std::size_t ceiling_of(engine& e) {
  const auto* figures = e.figures().extras.find<http::http_figures>();
  if (!figures) return 0;
  const auto all = figures->limits.totals();
  return all.empty() ? 0 : all.front().second.ceiling;
}
}  // namespace

TEST_CASE("an API's limit has the engine's whole --concurrency as its ceiling, however it splits among the shards",
          "[adaptive][ceiling][e2e]") {
  stub::stub_options so;
  so.latency = 5ms;
  stub::ipapi_stub api(so);
  api.start();
  for (std::size_t concurrency : {3, 5, 7}) {
    DYNAMIC_SECTION("--concurrency " << concurrency << " on two shards") {
      auto st = std::make_shared<memory_store>();
      st->seed_random_ips(2000, 5);
      http::processor_options p;
      p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
      p.shards = 2;
      engine_config cfg;
      cfg.shards = 2;
      cfg.concurrency = concurrency;
      cfg.claim_batch = 10;
      engine e(cfg, st, http::make_http_processor_factory(p));
      e.start();
      REQUIRE(test::eventually([&] { return ceiling_of(e) != 0; }));
      CHECK(ceiling_of(e) == concurrency);
      // The controls' POST /concurrency: the new whole, not a shard's part of it times two.
      e.set_concurrency(concurrency + 2);
      CHECK(test::eventually([&] { return ceiling_of(e) == concurrency + 2; }, 10s));
      e.wait();
      CHECK(ceiling_of(e) == concurrency + 2);
      CHECK(e.summary().completed == 2000);
    }
  }
}

TEST_CASE("when a shard sends no more, the shards still sending take its part of the API's limit", "[adaptive][ceiling]") {
  // A limit of 7 on two shards goes all to shard 0 (as few shards as get four calls each); shard
  // 1 keeps one call for what it holds. Once shard 0's dispatcher ends (the store has nothing it
  // could claim), shard 1 ran the run's tail one call at a time: the split went by index alone.
  stub::ipapi_stub api(stub::stub_options::loopback(1ms));
  api.start();
  http::http_figures figures;
  http::client_options o;
  o.adaptive = http::adaptive_settings{};
  o.adaptive->initial = o.adaptive->min = 7;  // held at 7 for the test
  o.adaptive->max = 14;                       // --concurrency 14: 7 pipelines a shard
  o.figures = &figures;
  o.shards = 2;
  net::io_context ioc;
  auto first = o, second = o;
  first.shard = 0;
  second.shard = 1;
  http::client c0(ioc.get_executor(), first), c1(ioc.get_executor(), second);
  const http::origin to{"127.0.0.1", api.port(), false};
  int status = 0;
  auto ask = [&]() -> awaitable<void> { status = (co_await c1.get(to, "/json/8.8.8.8")).status; };
  net::co_spawn(ioc, ask(), net::detached);
  ioc.run();
  REQUIRE(status == 200);
  CHECK(c1.limit(to) == 1);      // the split leaves shard 1 none (one for what it holds)
  CHECK_FALSE(c0.parked(to));
  c0.leave(to);                  // shard 0's dispatcher ended
  CHECK(c1.limit(to) == 7);      // the whole limit, where it ran one call
  CHECK_FALSE(c1.parked(to));
}
