// An API-wide outage is not the items' failure: the engine's circuit breaker
// (engine/src/circuit_breaker.hpp, shard_api_outage.cpp) keeps the items that met it under their
// leases, probes, and resumes -- with the real stub going away and coming back on its port, and
// --max-attempts 1 so that any attempt spent on the outage would fail an item.
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>
#include <dibs/metrics_text.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "support/engine_configs.hpp"
#include "support/eventually.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {

engine_config outage_config() {
  auto c = test::config_of(2, 20, 10, 30s);
  c.max_attempts = 1;  // an attempt spent on the outage fails the item
  c.circuit_trip_after = 3;
  c.circuit_probe_min = 100ms;
  c.circuit_probe_max = 400ms;
  return c;
}

template <class Body>
class plain_processor final : public processor {
 public:
  explicit plain_processor(Body b) : body_(std::move(b)) {}
  awaitable<outcome> process(job j) override { co_return body_(j); }

 private:
  Body body_;
};
template <class Body>
processor_factory plain_factory(Body b) {
  return [b](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<plain_processor<Body>>(b); };
}
}  // namespace

TEST_CASE("an API outage in the middle of a run costs no item an attempt", "[engine][outage]") {
  auto first = std::make_unique<stub::ipapi_stub>(stub::stub_options::loopback(10ms));
  first->start();
  const auto port = first->port();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(4'000, 5);  // about two seconds of work left when the API goes away

  http::processor_options popts;
  popts.url = http::url_template::parse(first->base_url() + "/json/{originatingIp}");
  popts.backoff_base = 10ms;
  popts.backoff_max = 50ms;
  engine e(outage_config(), st, http::make_http_processor_factory(popts));
  e.start();

  // The API goes away mid-run (its port refuses connections) ...
  REQUIRE(test::eventually([&] { return load(e.figures().completed) >= 200; }));
  first->stop();
  first.reset();
  // ... the breaker opens and probes fail for a while ...
  REQUIRE(test::eventually([&] { return load(e.figures().circuit_trips) >= 1 && load(e.figures().waiting_for_api) > 0; }));
  CHECK(load(e.figures().failed) == 0);
  CHECK(load(e.figures().circuit_open) >= 1);
  // The state shows where an operator looks: /status and /metrics.
  CHECK(status_json(e, std::nullopt).find("\"api\":\"down\"") != std::string::npos);
  CHECK(prometheus_text(e, std::nullopt).find("\ndibs_api_circuit_trips_total ") != std::string::npos);
  // ... and it comes back on the same port.
  auto opts = stub::stub_options::loopback(10ms);
  opts.port = port;
  stub::ipapi_stub second(opts);
  second.start();
  e.wait();

  const auto sum = e.summary();
  CHECK(sum.completed == 4'000);
  CHECK(sum.failed == 0);
  CHECK(load(e.figures().circuit_open) == 0);
  CHECK(load(e.figures().waiting_for_api) == 0);
  CHECK(status_json(e, std::nullopt).find("\"api\":\"up\"") != std::string::npos);
  CHECK(st->stats_now().drained());
  for (const auto& it : st->snapshot()) {
    CHECK(it.attempts == 1);  // no item was claimed twice: the outage spent no attempt
    CHECK(it.writes == 1);
    CHECK_FALSE(it.lease.has_value());
  }
}

TEST_CASE("one item's API-level failure among answers spends its attempts as before", "[engine][outage]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(200, 6);
  const auto bad = st->snapshot().front().id;
  auto cfg = outage_config();
  cfg.max_attempts = 2;
  engine e(cfg, st, plain_factory([bad](const job& j) {
             if (j.id == bad) return outcome::unavailable(0ms, "HTTP 503 for this one", 503);
             return outcome::done("{\"ok\":true}");
           }));
  e.start();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.completed == 199);
  CHECK(sum.failed == 1);
  CHECK(load(e.figures().circuit_trips) == 0);
  for (const auto& it : st->snapshot()) {
    if (it.id != bad) continue;
    CHECK(it.attempts == 2);
    REQUIRE(it.failed.has_value());
    CHECK(it.failed->reason == "gave up after 2 attempts: HTTP 503 for this one");
  }
}

TEST_CASE("a stop while the API is down gives the waiting items back and ends", "[engine][outage]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(100, 7);
  engine e(outage_config(), st, plain_factory([](const job&) { return outcome::unavailable(0ms, "connect: Connection refused"); }));
  e.start();
  REQUIRE(test::eventually([&] { return load(e.figures().circuit_open) >= 1 && load(e.figures().waiting_for_api) > 0; }));
  e.stop();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.failed == 0);
  CHECK(sum.completed == 0);
  CHECK(sum.released > 0);
  const auto s = st->stats_now();
  CHECK(s.leased_live == 0);
  CHECK(s.leased_expired == 0);
  CHECK(s.failed == 0);
}

namespace {
// The API is down for the first calls; the first call after them (the breaker's probe) hangs
// past max_processing and is abandoned; every later call is answered.
class probe_hangs final : public processor {
 public:
  explicit probe_hangs(std::shared_ptr<std::atomic<int>> calls) : calls_(std::move(calls)) {}
  awaitable<outcome> process(job) override {
    const int n = ++*calls_;
    if (n <= 3) co_return outcome::unavailable(0ms, "connect: Connection refused");
    if (n == 4) {
      net::steady_timer t(co_await net::this_coro::executor, 30s);
      co_await t.async_wait(net::use_awaitable);
    }
    co_return outcome::done("{\"ok\":true}");
  }

 private:
  std::shared_ptr<std::atomic<int>> calls_;
};
}  // namespace

TEST_CASE("a probe that tells nothing (abandoned at max_processing) is followed by another", "[engine][outage]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(20, 8);
  auto cfg = outage_config();
  cfg.shards = 1;
  cfg.concurrency = 3;
  cfg.claim_batch = 3;
  cfg.max_attempts = 5;
  cfg.max_processing = 300ms;
  auto calls = std::make_shared<std::atomic<int>>(0);
  engine e(cfg, st, [calls](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<probe_hangs>(calls); });
  e.start();
  const bool ended = test::eventually([&] { return e.finished(); });
  if (!ended) e.stop_now();
  e.wait();
  CHECK(ended);  // before: the breaker stayed "probing" for good and the run never ended
  CHECK(e.summary().completed == 20);
  CHECK(load(e.figures().circuit_open) == 0);
}

namespace {
// An API that is down, and items of which some can't even be sent (their request can't be
// built: outcome::invalid). Counts the invalid ones met while the circuit was open.
class down_with_invalid final : public processor {
 public:
  down_with_invalid(const counters* figures, std::shared_ptr<std::atomic<int>> invalid_while_open)
      : figures_(figures), invalid_while_open_(std::move(invalid_while_open)) {}
  awaitable<outcome> process(job j) override {
    if (j.id.back() % 2 == 0) {
      if (load(figures_->circuit_open) > 0) ++*invalid_while_open_;
      co_return outcome::invalid("'{originatingIp}' is empty in this item");
    }
    co_return outcome::unavailable(0ms, "connect: Connection refused");
  }

 private:
  const counters* figures_;
  std::shared_ptr<std::atomic<int>> invalid_while_open_;
};
}  // namespace

TEST_CASE("a probe that never reaches the API (its request can't be built) does not close the breaker", "[engine][outage]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(60, 9);
  auto cfg = outage_config();
  cfg.shards = 1;
  cfg.concurrency = 1;
  cfg.claim_batch = 1;
  cfg.max_attempts = 1;
  auto invalid_while_open = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<engine> e;
  e = std::make_unique<engine>(cfg, st, [&e, invalid_while_open](const shard_info&) -> std::unique_ptr<processor> {
    return std::make_unique<down_with_invalid>(&e->figures(), invalid_while_open);
  });
  e->start();
  REQUIRE(test::eventually([&] { return invalid_while_open->load() >= 3; }));
  e->stop();
  e->wait();
  // Before: each such probe closed the circuit, the next failures opened it again.
  CHECK(load(e->figures().circuit_trips) == 1);
  CHECK(e->summary().failed >= 3);  // the invalid items fail, as items that can't be sent do
}

namespace {
// One item's call ("late") was sent while the API was down and is answered, 503, only after the
// API came back (its answer queued behind the outage: a loaded server, or a client whose CPU is
// the bottleneck). Every other call fails with no answer until the test says the API is back.
class late_outage_answer final : public processor {
 public:
  struct control {
    std::atomic<bool> up{false};
    std::atomic<bool> release_late{false};
    std::atomic<int> late_calls{0};
    std::string late;
  };
  explicit late_outage_answer(std::shared_ptr<control> c) : c_(std::move(c)) {}
  awaitable<outcome> process(job j) override {
    if (j.id == c_->late && ++c_->late_calls == 1) {
      net::steady_timer t(co_await net::this_coro::executor);
      while (!c_->release_late) {  // polls the test's word, as an answer arrives when it does
        t.expires_after(1ms);
        co_await t.async_wait(net::use_awaitable);
      }
      co_return outcome::unavailable(0ms, "HTTP 503 Service Unavailable", 503);
    }
    if (!c_->up) co_return outcome::unavailable(0ms, "connect: Connection refused");
    co_return outcome::done("{\"ok\":true}");
  }

 private:
  std::shared_ptr<control> c_;
};
}  // namespace

TEST_CASE("a call sent during an outage and answered 503 after the API came back spends no attempt", "[engine][outage]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(40, 10);
  auto c = std::make_shared<late_outage_answer::control>();
  c->late = st->snapshot().front().id;
  auto cfg = outage_config();
  cfg.shards = 1;
  cfg.concurrency = 4;
  cfg.claim_batch = 4;
  engine e(cfg, st, [c](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<late_outage_answer>(c); });
  e.start();
  REQUIRE(test::eventually([&] { return load(e.figures().circuit_trips) >= 1; }));
  c->up = true;
  // The probe is answered: the circuit closes with the late call still out.
  REQUIRE(test::eventually([&] { return load(e.figures().circuit_open) == 0 && load(e.figures().completed) >= 1; }));
  c->release_late = true;
  const bool ended = test::eventually([&] { return e.finished(); });
  if (!ended) e.stop_now();
  e.wait();
  CHECK(ended);
  CHECK(c->late_calls == 2);  // sent again, once
  // Before: the late 503 met a closed circuit, was taken for the item's own failure and, with
  // --max-attempts 1, failed it.
  CHECK(e.summary().failed == 0);
  CHECK(e.summary().completed == 40);
}

namespace {
// Every item's first call is answered 503 and its second 200 (an API that warms each key up, a
// cache filled on a miss), each answer 5 ms after its call; a call made while the circuit is open
// is a probe, and a first one is a probe that fails.
class warming_api final : public processor {
 public:
  struct seen {
    std::mutex m;
    std::set<std::string> called;
    std::atomic<int> failed_probes{0};
    engine* e = nullptr;
  };
  explicit warming_api(std::shared_ptr<seen> s) : s_(std::move(s)) {}
  awaitable<outcome> process(job j) override {
    bool first;
    {
      std::lock_guard lock(s_->m);
      first = s_->called.insert(j.id).second;
    }
    if (first && load(s_->e->figures().circuit_open) > 0) ++s_->failed_probes;
    net::steady_timer t(co_await net::this_coro::executor);
    t.expires_after(5ms);
    co_await t.async_wait(net::use_awaitable);
    if (first) co_return outcome::unavailable(0ms, "HTTP 503 warming up", 503);
    co_return outcome::done("{\"ok\":true}");
  }

 private:
  std::shared_ptr<seen> s_;
};
}  // namespace

TEST_CASE("an API that refuses every item's first call answers the probe of an item it refused once", "[engine][outage]") {
  // A batch of fresh items in hand when the circuit opens: probes of fresh items alone all fail,
  // each a backoff later (at the CLI's defaults a probe a second and more apart, 40 of them to
  // find the API up). One probe in two is an item that had its first answer, and it is answered.
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(300, 12);
  auto s = std::make_shared<warming_api::seen>();
  auto cfg = outage_config();
  cfg.shards = 1;
  cfg.concurrency = 4;
  cfg.claim_batch = 100;
  engine e(cfg, st, [s](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<warming_api>(s); });
  s->e = &e;
  e.start();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.completed == 300);
  CHECK(sum.failed == 0);  // no attempt spent on the 503s (max_attempts 1)
  const auto trips = load(e.figures().circuit_trips);
  CHECK(trips >= 1);
  // At most one fresh item's probe fails an opening before a refused one's is answered.
  UNSCOPED_INFO("trips " << trips << ", probes of fresh items refused " << s->failed_probes.load());
  CHECK(static_cast<std::uint64_t>(s->failed_probes.load()) <= trips);
}
