// Rate limits end to end: the engine against the stub, counting what the stub actually saw.
#include "support/served_rate.hpp"

#include <dibs/http/http_figures.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
engine_config rate_config(std::size_t concurrency) {
  engine_config c;
  c.shards = 2;
  c.concurrency = concurrency;
  c.claim_batch = 10;
  return c;
}
}  // namespace

TEST_CASE("a --rate limit holds every shard together under it", "[rate][e2e]") {
  stub::stub_options so;
  so.record = true;
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(25, 21);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  p.limiter = std::make_shared<http::rate_limiter>(10.0, 1.0);  // 10/s for the whole process
  engine e(rate_config(50), st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 25);
  const auto times = api.served_times();
  REQUIRE(times.size() == 25);
  // At most 10 + the one burst allowed in any 800 ms: a window short of the second leaves room
  // for a request the stub stamped late (a stalled thread), which a limiter that ignored the rate
  // would still overrun.
  CHECK(test::busiest(times, 800ms) <= 10 + 1);
  CHECK(times.back() - times.front() >= 2300ms);  // 25 requests at 10/s can't take less
}

TEST_CASE("when the API says stop (X-Rl: 0), nothing is sent until X-Ttl has passed", "[rate][e2e]") {
  stub::stub_options so;
  so.rate_limit = 5;  // ip-api's rule, with one-second windows to keep the test short
  so.rate_window = 1000ms;
  so.record = true;
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(12, 22);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  auto cfg = rate_config(1);  // one call at a time: every request starts after the previous answer
  cfg.shards = 1;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 12);
  CHECK(api.rate_limited() == 0);  // the client never ran into a 429: it stopped at X-Rl: 0
  // What the dashboard shows: the answers that said stop (the 5th and the 10th at least), no 429.
  const auto* figures = e.figures().extras.find<http::http_figures>();
  REQUIRE(figures);
  CHECK(figures->api_stops.load() >= 2);
  CHECK(figures->throttled.load() == 0);
}

TEST_CASE("calls that run into a full window are retried after it, and no document fails", "[rate][e2e]") {
  stub::stub_options so;
  so.rate_limit = 3;
  so.rate_window = 1000ms;
  so.record = true;
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(9, 23);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  p.backoff_base = 10ms;
  auto cfg = rate_config(20);  // many calls at once: some run into the 429 before X-Rl: 0 arrives
  cfg.max_attempts = 20;
  cfg.grace = 0ms;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 9);
  CHECK(e.summary().failed == 0);
  // A 429 only meets a call already in flight when its window filled: 9 items against 3 answers a
  // window is at most 6 + 3 rejections. Calls that ignored the stop would be rejected again and
  // again within the window (the backoff base is 10 ms).
  CHECK(api.rate_limited() <= 9);
  const auto* figures = e.figures().extras.find<http::http_figures>();  // the dashboard's 429 count
  REQUIRE(figures);
  CHECK(figures->throttled.load() == api.rate_limited());
}

TEST_CASE("every shard's processor shares one limiter, so a stop seen by one holds them all", "[rate]") {
  net::io_context ioc;
  http::processor_options p;
  p.url = http::url_template::parse("http://127.0.0.1:1/json/{originatingIp}");
  auto factory = http::make_http_processor_factory(p);
  auto a = factory(shard_info{0, ioc.get_executor(), nullptr});
  auto b = factory(shard_info{1, ioc.get_executor(), nullptr});
  auto& pa = dynamic_cast<http::http_processor&>(*a);
  auto& pb = dynamic_cast<http::http_processor&>(*b);
  REQUIRE(pa.limiter() == pb.limiter());
  const auto until = http::rate_limiter::clock::now() + 5s;
  pa.limiter()->pause("127.0.0.1", until);
  CHECK(pb.limiter()->reserve("127.0.0.1") >= until);
}
