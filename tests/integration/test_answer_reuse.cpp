// Answer reuse (--reuse-answers) against the real stub: documents whose request is identical
// share one call, each still gets its own address's answer, and a shared call's trouble settles
// a joined document only the way its own call would have (answer_reuse.hpp says why).
#include "support/raw_http.hpp"
#include "support/eventually.hpp"

#include "adapters/http/reuse/answer_reuse.hpp"
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <set>
#include <thread>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::a_closed_port;

std::shared_ptr<http::answer_reuse> a_reuse() {
  return std::make_shared<http::answer_reuse>(http::answer_cache_limits{});
}

job job_for(const std::string& id, const std::string& ip, int attempts = 1) {
  job j;
  j.id = id;
  j.attempts = attempts;
  j.fields.push_back(job_field{"originatingIp", job_field::state::string, ip, {}});
  return j;
}

// Yields the io_context until `ready` holds: a wait on the other coroutines' progress, no clock.
awaitable<void> until(std::function<bool()> ready) {
  const auto ex = co_await net::this_coro::executor;
  while (!ready()) co_await net::post(ex, net::use_awaitable);
}

struct one_shard {
  explicit one_shard(const stub::ipapi_stub& api, const std::string& path, std::shared_ptr<http::answer_reuse> r = a_reuse(),
                     bool no_data_fails = false)
      : reuse(std::move(r)) {
    auto o = std::make_shared<http::processor_options>();
    o->url = http::url_template::parse(api.base_url() + path);
    o->backoff_base = 10ms;
    o->no_data_fails = no_data_fails;
    o->reuse = reuse;
    opts = o;
    proc = std::make_unique<http::http_processor>(ioc.get_executor(), opts, &figures);
  }
  std::string key(const std::string& target) const {
    // The request's identity (request_builder.hpp) of a GET with no header nor body.
    return "GET http://127.0.0.1:" + std::to_string(opts->url.port()) + target;
  }
  std::shared_ptr<http::answer_reuse> reuse;
  std::shared_ptr<const http::processor_options> opts;
  net::io_context ioc{1};
  counters figures;
  std::unique_ptr<http::http_processor> proc;
};
}  // namespace

TEST_CASE("200 documents from 20 addresses: at most 20 requests, each document its own address's answer",
          "[reuse][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback(5ms));
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(200, 17, 20);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  p.reuse = a_reuse();
  engine_config cfg;
  cfg.shards = 2;  // joined calls cross threads: a waiter's outcome is delivered on its own shard
  cfg.concurrency = 64;
  cfg.claim_batch = 16;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  const auto s = e.summary();
  CHECK(s.completed == 200);
  CHECK(s.failed == 0);
  CHECK(api.requests() <= 20);
  CHECK(s.answer_calls == api.requests());
  CHECK(s.answers_reused + s.answers_joined == 200 - s.answer_calls);
  CHECK(s.answer_hit_ratio() >= 0.9);
  std::set<std::string> addresses;
  for (const auto& it : st->snapshot()) {
    REQUIRE(it.target_json);
    addresses.insert(it.source.value);
    // Its own address's answer, never another key's.
    CHECK(*it.target_json == stub::answer_for(it.source.value));
  }
  CHECK(addresses.size() == 20);
  CHECK(p.reuse->calls_in_flight() == 0);
  CHECK(p.reuse->cached_entries() == 20);
}

TEST_CASE("a joined document of a call that failed for the API is retried on its OWN attempts, not failed",
          "[reuse]") {
  stub::stub_options so;
  so.error_rate = 1.0;  // every /json answer is a 500
  stub::ipapi_stub api(so);
  api.start();
  one_shard s(api, "/json/{originatingIp}");
  // The leader is at its tenth attempt (the engine may fail it: its own count), the joiner at
  // its first: it gets a retry of its own, never the leader's verdict on the leader's count.
  auto leader = net::co_spawn(s.ioc, s.proc->process(job_for("1", "8.8.8.8", 10)), net::use_future);
  auto joiner = net::co_spawn(s.ioc, s.proc->process(job_for("2", "8.8.8.8", 1)), net::use_future);
  s.ioc.run();
  const auto l = leader.get(), j = joiner.get();
  CHECK(api.requests() == 1);
  CHECK(l.k == outcome::kind::retry);
  CHECK_FALSE(l.shared);
  CHECK(j.k == outcome::kind::retry);
  CHECK(j.shared);  // the circuit breaker does not count one failed call twice
  CHECK(j.api_down == l.api_down);
  CHECK(j.why == l.why);
  CHECK(j.after >= l.after);
  CHECK(load(s.figures.answer_calls) == 1);
  CHECK(load(s.figures.answers_joined) == 1);
  CHECK(s.reuse->cached_entries() == 0);  // a failure is never cached: the next one calls again
}

TEST_CASE("a key's own failure (ip-api's status fail, --no-data-fails) fails the joined documents too, and is not cached",
          "[reuse]") {
  stub::ipapi_stub api(stub::stub_options{});
  api.start();
  one_shard s(api, "/json/{originatingIp}", a_reuse(), true);
  auto a = net::co_spawn(s.ioc, s.proc->process(job_for("1", "10.0.0.1")), net::use_future);
  auto b = net::co_spawn(s.ioc, s.proc->process(job_for("2", "10.0.0.1")), net::use_future);
  s.ioc.run();
  const auto x = a.get(), y = b.get();
  CHECK(api.requests() == 1);
  CHECK(x.k == outcome::kind::fail);
  CHECK(y.k == outcome::kind::fail);
  CHECK(y.why == x.why);
  CHECK(s.reuse->cached_entries() == 0);
}

TEST_CASE("ip-api's 'no data' for a key is the joined documents' answer too, marked no data", "[reuse][no-data]") {
  stub::ipapi_stub api(stub::stub_options{});
  api.start();
  one_shard s(api, "/json/{originatingIp}");
  auto a = net::co_spawn(s.ioc, s.proc->process(job_for("1", "10.0.0.1")), net::use_future);
  auto b = net::co_spawn(s.ioc, s.proc->process(job_for("2", "10.0.0.1")), net::use_future);
  s.ioc.run();
  const auto x = a.get(), y = b.get();
  CHECK(api.requests() == 1);
  CHECK(x.k == outcome::kind::done);
  CHECK(x.no_data);
  CHECK(y.k == outcome::kind::done);
  CHECK(y.no_data);
  CHECK(y.result == x.result);
}

TEST_CASE("a cancelled leader settles no one: its joined document makes the call itself", "[reuse]") {
  stub::ipapi_stub api(stub::stub_options{});
  api.start();
  one_shard s(api, "/test/slow/200/{originatingIp}");
  const auto key = s.key("/test/slow/200/8.8.4.4");
  net::cancellation_signal cancel_leader;
  auto leader = net::co_spawn(s.ioc, s.proc->process(job_for("1", "8.8.4.4")),
                              net::bind_cancellation_slot(cancel_leader.slot(), net::use_future));
  auto joiner = net::co_spawn(s.ioc, s.proc->process(job_for("2", "8.8.4.4")), net::use_future);
  net::co_spawn(s.ioc, [&]() -> awaitable<void> {
    co_await until([&] { return s.reuse->waiters(key) == 1 && api.requests() == 1; });
    cancel_leader.emit(net::cancellation_type::terminal);  // shutdown, or --max-processing
  }, net::detached);
  s.ioc.run();
  try {
    const auto l = leader.get();
    CHECK(l.k != outcome::kind::done);
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == net::error::operation_aborted);
  }
  const auto j = joiner.get();
  REQUIRE(j.k == outcome::kind::done);
  CHECK(j.result == stub::answer_for("8.8.4.4"));
  CHECK_FALSE(j.shared);  // its own call's answer
  CHECK(api.requests() == 2);
  CHECK(load(s.figures.answer_calls) == 2);
  CHECK(load(s.figures.answers_joined) == 0);
}

TEST_CASE("a cancelled joiner leaves the call, and the leader's answer is still kept for the next", "[reuse]") {
  stub::ipapi_stub api(stub::stub_options{});
  api.start();
  one_shard s(api, "/test/slow/100/{originatingIp}");
  const auto key = s.key("/test/slow/100/8.8.4.4");
  net::cancellation_signal cancel_joiner;
  auto leader = net::co_spawn(s.ioc, s.proc->process(job_for("1", "8.8.4.4")), net::use_future);
  auto joiner = net::co_spawn(s.ioc, s.proc->process(job_for("2", "8.8.4.4")),
                              net::bind_cancellation_slot(cancel_joiner.slot(), net::use_future));
  net::co_spawn(s.ioc, [&]() -> awaitable<void> {
    co_await until([&] { return s.reuse->waiters(key) == 1; });
    cancel_joiner.emit(net::cancellation_type::terminal);
    co_await until([&] { return s.reuse->waiters(key) == 0; });
  }, net::detached);
  s.ioc.run();
  CHECK_THROWS_AS(joiner.get(), boost::system::system_error);
  CHECK(leader.get().k == outcome::kind::done);
  // The next document with that request takes the cached answer: no call.
  auto later = net::co_spawn(s.ioc, s.proc->process(job_for("3", "8.8.4.4")), net::use_future);
  s.ioc.restart();
  s.ioc.run();
  const auto l = later.get();
  CHECK(l.k == outcome::kind::done);
  CHECK(l.shared);
  CHECK(api.requests() == 1);
  CHECK(load(s.figures.answers_reused) == 1);
}

TEST_CASE("a joined document on another shard's thread gets the answer on its own thread", "[reuse]") {
  stub::ipapi_stub api(stub::stub_options{});
  api.start();
  auto reuse = a_reuse();
  // The leader's call takes 2 s: the second document joins it even if its thread is slow to run.
  one_shard a(api, "/test/slow/2000/{originatingIp}", reuse), b(api, "/test/slow/2000/{originatingIp}", reuse);
  const auto key = a.key("/test/slow/2000/1.2.3.4");
  auto first = net::co_spawn(a.ioc, a.proc->process(job_for("1", "1.2.3.4")), net::use_future);
  std::thread::id resumed_on;
  auto second = net::co_spawn(b.ioc, [&]() -> awaitable<outcome> {
    co_await until([&] { return reuse->calls_in_flight() == 1; });  // a leads
    auto o = co_await b.proc->process(job_for("2", "1.2.3.4"));
    resumed_on = std::this_thread::get_id();
    co_return o;
  }, net::use_future);
  std::thread ta([&] { a.ioc.run(); });
  std::thread tb([&] { b.ioc.run(); });
  const auto tb_id = tb.get_id();
  ta.join();
  tb.join();
  CHECK(first.get().k == outcome::kind::done);
  const auto o = second.get();
  CHECK(o.k == outcome::kind::done);
  CHECK(o.result == stub::answer_for("1.2.3.4"));
  CHECK(o.shared);
  CHECK(load(b.figures.answers_joined) == 1);  // joined the call in flight, not read from the cache
  CHECK(resumed_on == tb_id);
  CHECK(api.requests() == 1);
  CHECK(reuse->waiters(key) == 0);
}

TEST_CASE("one refused call that ten documents joined counts once in the circuit breaker, and all wait under lease",
          "[reuse][circuit]") {
  auto st = std::make_shared<memory_store>();
  for (int i = 0; i < 10; ++i) st->add("8.8.8.8");
  http::processor_options p;
  p.url = http::url_template::parse("http://127.0.0.1:" + std::to_string(a_closed_port()) + "/json/{originatingIp}");
  p.reuse = a_reuse();
  engine_config cfg;
  cfg.shards = 1;
  cfg.concurrency = 10;
  cfg.claim_batch = 10;
  cfg.circuit_trip_after = 2;  // counted once per document, the one refusal would open it
  cfg.circuit_probe_min = 60s;  // nothing is settled or probed while the test looks
  cfg.circuit_probe_max = 60s;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  const auto& f = e.figures();
  CHECK(test::eventually([&] { return load(f.waiting_for_api) == 10; }));
  CHECK(load(f.answer_calls) == 1);
  CHECK(load(f.answers_joined) == 9);
  CHECK(load(f.circuit_trips) == 0);  // one call, one piece of evidence
  CHECK(load(f.failed) == 0);
  e.stop();
  e.wait();
  CHECK(e.summary().failed == 0);
  CHECK(st->stats_now().pending == 10);  // given back at the stop, no attempt spent on a verdict
}
