// Whole engine runs on the memory store: through the real stub over HTTP, and with small
// custom processors that provoke shutdown, lease loss, renewal and retries deterministically.
#include "support/engine_configs.hpp"

#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <dibs/setting_error.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
engine_config small_config() {
  auto c = test::config_of(2, 200, 50, 60s);
  c.grace = 1s;
  c.shutdown_timeout = 10s;
  return c;
}

// A processor made of a coroutine body, for tests.
template <class Body>
class lambda_processor final : public processor {
 public:
  explicit lambda_processor(Body b) : body_(std::move(b)) {}
  awaitable<outcome> process(job j) override { co_return co_await body_(std::move(j)); }

 private:
  Body body_;
};
template <class Body>
processor_factory factory_of(Body b) {
  return [b](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<lambda_processor<Body>>(b); };
}

awaitable<void> sleep_for(std::chrono::milliseconds d) {
  net::steady_timer t(co_await net::this_coro::executor, d);
  co_await t.async_wait(net::use_awaitable);
}

// A run whose every call takes `call`, under leases of 4 s without a grace: longer calls last
// only as long as the keeper renews their leases.
run_summary run_long_calls(std::shared_ptr<store> st, std::chrono::milliseconds call, std::size_t shards) {
  auto body = [call](job) -> awaitable<outcome> {
    co_await sleep_for(call);
    co_return outcome::done("{}");
  };
  auto cfg = small_config();
  cfg.shards = shards;
  cfg.lease = 4s;
  cfg.grace = 0ms;
  engine e(cfg, std::move(st), factory_of(body));
  e.start();
  e.wait();
  return e.summary();
}

void require_nothing_leased(memory_store& s) {
  auto st = s.stats_now();
  CHECK(st.leased_live == 0);
  CHECK(st.leased_expired == 0);
  for (const auto& it : s.snapshot()) {
    CHECK_FALSE(it.lease.has_value());
    CHECK(it.writes <= 1);
  }
}
}  // namespace

TEST_CASE("an end-to-end run completes 10,000 documents exactly once", "[engine][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(10'000, 11);

  http::processor_options popts;
  popts.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  engine e(small_config(), st, http::make_http_processor_factory(popts));
  e.start();
  e.wait();

  const auto sum = e.summary();
  CHECK(sum.completed == 10'000);
  CHECK(sum.failed == 0);
  CHECK(sum.lost_leases == 0);
  CHECK(sum.released == 0);
  CHECK(api.requests() == 10'000);
  auto s = st->stats_now();
  CHECK(s.done == 10'000);
  CHECK(s.drained());
  for (const auto& it : st->snapshot()) {
    REQUIRE(it.target_json.has_value());
    CHECK(it.writes == 1);
    CHECK(it.write_attempts == 1);  // the engine sent one write, not merely the store kept one
    CHECK(it.attempts == 1);
    CHECK_FALSE(it.lease.has_value());
    CHECK(*it.target_json == stub::answer_for(it.source.value));
  }
  CHECK(sum.line().rfind("summary: completed=10000 failed=0 lost_leases=0 released=0 elapsed_s=", 0) == 0);
}

TEST_CASE("a graceful stop mid-run leaves nothing leased and loses no completed result", "[engine][shutdown]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(5'000, 12);
  std::atomic<engine*> running{nullptr};
  std::atomic<int> started{0};
  auto body = [&](job) -> awaitable<outcome> {
    if (++started == 1'000) running.load()->stop();  // stop from inside the run: no timing guess
    co_await sleep_for(2ms);
    co_return outcome::done("{\"ok\":true}");
  };
  engine e(small_config(), st, factory_of(body));
  running = &e;
  e.start();
  e.wait();

  const auto sum = e.summary();
  auto s = st->stats_now();
  CHECK(sum.completed > 0);
  CHECK(sum.completed < 5'000);
  CHECK(s.done == sum.completed);  // every result that finished was written
  CHECK(sum.released > 0);         // prefetched items went back
  CHECK(s.pending == 5'000 - s.done);
  require_nothing_leased(*st);
}

TEST_CASE("a stop at the deadline cancels in-flight calls and releases them", "[engine][shutdown]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(300, 13);
  http::processor_options popts;
  popts.url = http::url_template::parse(api.base_url() + "/test/hang?ip={originatingIp}");
  popts.adaptive.reset();  // every pipeline's call in flight at once: the shutdown must cancel 200
  auto cfg = small_config();
  cfg.shutdown_timeout = 100ms;
  engine e(cfg, st, http::make_http_processor_factory(popts));
  std::atomic<bool> stopped{false};
  e.start();
  // Stop once every pipeline is waiting on the hanging API (polling a counter, not sleeping).
  while (load(e.figures().in_flight) < 200) std::this_thread::yield();
  e.stop();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.completed == 0);
  CHECK(sum.failed == 0);
  CHECK(sum.released == 300);
  auto s = st->stats_now();
  CHECK(s.pending == 300);
  require_nothing_leased(*st);
}

TEST_CASE("a result computed after the lease was taken over is discarded and counted", "[engine][fencing]") {
  std::atomic<std::int64_t> offset_ms{0};
  memory_store::options o;
  o.now = [&] { return store_clock::now() + offset_ms.load() * 1ms; };
  auto st = std::make_shared<memory_store>(o);
  st->seed_random_ips(1, 14);
  std::atomic<int> calls{0};
  auto body = [&](job j) -> awaitable<outcome> {
    if (++calls == 1) {
      // While this call runs, the lease expires and another worker takes the item and finishes.
      offset_ms += 120'000;
      auto thief = st->claim_now({1, "thief", 60s, 1s});
      REQUIRE(thief.size() == 1);
      REQUIRE(thief[0].id == j.id);
      REQUIRE(st->complete_now({completion{thief[0].ref(), "{\"by\":\"thief\"}"}}).applied == 1);
    }
    co_return outcome::done("{\"by\":\"stale\"}");
  };
  auto cfg = small_config();
  cfg.shards = 1;
  engine e(cfg, st, factory_of(body));
  e.start();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.lost_leases == 1);
  CHECK(sum.completed == 0);
  auto it = st->get("1");
  CHECK(*it->target_json == "{\"by\":\"thief\"}");
  CHECK(it->writes == 1);
}

TEST_CASE("the lease keeper renews leases of calls longer than the lease", "[engine][lease]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(20, 15);
  // Renewals are due at half the lease and the keeper looks every quarter: a renewal lands at
  // least a second before expiry even on a loaded machine. Calls outlast two leases.
  const auto sum = run_long_calls(st, 9'000ms, 2);
  CHECK(sum.completed == 20);
  CHECK(sum.lost_leases == 0);
  CHECK(sum.renewals >= 20);
  for (const auto& it : st->snapshot()) CHECK(it.attempts == 1);  // nobody took an item over
  require_nothing_leased(*st);
}

TEST_CASE("retries back off, then fail the item with its reason after --max-attempts", "[engine][retry]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(10, 16);
  auto body = [](job) -> awaitable<outcome> { co_return outcome::retry(1ms, "HTTP 503 Service Unavailable", 503); };
  auto cfg = small_config();
  cfg.max_attempts = 3;
  cfg.grace = 0ms;
  engine e(cfg, st, factory_of(body));
  e.start();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.failed == 10);
  CHECK(sum.retries == 20);
  for (const auto& it : st->snapshot()) {
    REQUIRE(it.failed.has_value());
    CHECK(it.attempts == 3);
    CHECK(it.failed->reason == "gave up after 3 attempts: HTTP 503 Service Unavailable");
    CHECK(it.failed->http_status == 503);
  }
  require_nothing_leased(*st);
}

TEST_CASE("a call longer than --max-processing is abandoned and retried, shorter ones untouched", "[engine][retry]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(20, 18);
  auto body = [](job j) -> awaitable<outcome> {
    if (std::stoi(j.id) % 2 == 1) {
      try {
        co_await sleep_for(30s);  // hangs: only the cancellation ends it
      } catch (const boost::system::system_error&) {
        co_return outcome::retry(0ms, "swallowed the cancellation");  // the engine still knows why
      }
    }
    co_return outcome::done("{}");
  };
  auto cfg = small_config();
  cfg.max_processing = 100ms;
  cfg.max_attempts = 2;
  cfg.grace = 0ms;
  engine e(cfg, st, factory_of(body));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 10);
  CHECK(e.summary().failed == 10);
  for (const auto& it : st->snapshot()) {
    if (std::stoi(it.id) % 2 == 0) {
      CHECK(it.target_json == "{}");
    } else {
      REQUIRE(it.failed.has_value());
      CHECK(it.attempts == 2);
      CHECK(it.failed->reason == "gave up after 2 attempts: abandoned after max_processing 100 ms");
    }
  }
  require_nothing_leased(*st);
}

TEST_CASE("a processor that throws does not stop the engine", "[engine][retry]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(4, 17);
  auto body = [](job) -> awaitable<outcome> {
    throw std::runtime_error("bug in user code");
    co_return outcome::done("{}");
  };
  auto cfg = small_config();
  cfg.max_attempts = 1;
  engine e(cfg, st, factory_of(body));
  e.start();
  e.wait();
  CHECK(e.summary().failed == 4);
  CHECK(st->get("1")->failed->reason == "gave up after 1 attempts: processor threw: bug in user code");
}

TEST_CASE("an engine on an empty store ends at once", "[engine]") {
  auto st = std::make_shared<memory_store>();
  auto body = [](job) -> awaitable<outcome> { co_return outcome::done("{}"); };
  engine e(small_config(), st, factory_of(body));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 0);
  CHECK(e.finished());
}

TEST_CASE("engine settings are validated with the setting's name, not a program's flag", "[engine]") {
  auto st = std::make_shared<memory_store>();
  auto body = [](job) -> awaitable<outcome> { co_return outcome::done("{}"); };
  auto cfg = small_config();
  cfg.concurrency = 0;
  CHECK_THROWS_WITH(engine(cfg, st, factory_of(body)), Catch::StartsWith("concurrency must be at least 1"));
  cfg = small_config();
  cfg.lease = 1ms;
  CHECK_THROWS_WITH(engine(cfg, st, factory_of(body)), Catch::StartsWith("lease must be at least 10 ms"));
  cfg = small_config();
  cfg.max_processing = -1ms;
  CHECK_THROWS_WITH(engine(cfg, st, factory_of(body)), Catch::StartsWith("max_processing must not be negative"));
  cfg = small_config();
  cfg.claim_batch = 0;
  CHECK_THROWS_AS(engine(cfg, st, factory_of(body)), setting_error);
}

TEST_CASE("the default shard count keeps two claim batches in flight per shard, up to one per core", "[engine]") {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  engine_config cfg;
  cfg.claim_batch = 100;
  cfg.concurrency = 125;  // one of eight processes sharing 1,000 pipelines
  CHECK(cfg.effective_shards() == 1);
  cfg.concurrency = 1;
  CHECK(cfg.effective_shards() == 1);
  cfg.concurrency = 200 * cores;
  CHECK(cfg.effective_shards() == cores);
  cfg.concurrency = 100'000;
  CHECK(cfg.effective_shards() == cores);  // never more than one per core
  cfg.shards = 3;
  CHECK(cfg.effective_shards() == 3);  // a given count is kept
}

namespace {
// The memory store, noting how many items each claim asked for.
class claim_recorder final : public store {
 public:
  explicit claim_recorder(std::shared_ptr<memory_store> m) : mem(std::move(m)) {}
  awaitable<std::vector<job>> claim(claim_request r) override {
    {
      std::lock_guard<std::mutex> lock(m);
      asked.push_back(r.max);
    }
    co_return co_await mem->claim(std::move(r));
  }
  awaitable<write_result> complete(std::vector<completion> b) override { co_return co_await mem->complete(std::move(b)); }
  awaitable<renew_result> renew(std::vector<renewal> b, millis lease) override { co_return co_await mem->renew(std::move(b), lease); }
  awaitable<write_result> release(std::vector<release_item> b) override { co_return co_await mem->release(std::move(b)); }
  awaitable<write_result> fail(std::vector<failure> b) override { co_return co_await mem->fail(std::move(b)); }
  awaitable<store_stats> stats() override { co_return co_await mem->stats(); }
  std::string describe() const override { return "recorder"; }

  std::shared_ptr<memory_store> mem;
  std::mutex m;
  std::vector<std::size_t> asked;
};
}  // namespace

TEST_CASE("with few pipelines per claim batch, a claim waits until half a batch fits", "[engine]") {
  // 125 pipelines and batches of 100 (one of eight processes sharing 1,000 pipelines): claiming
  // whenever one pipeline frees up would cost the store one statement per few rows.
  auto mem = std::make_shared<memory_store>();
  mem->seed_random_ips(3'000, 5);
  auto st = std::make_shared<claim_recorder>(mem);
  engine_config cfg = small_config();
  cfg.shards = 1;
  cfg.concurrency = 125;
  cfg.claim_batch = 100;
  auto body = [](job j) -> awaitable<outcome> {
    co_await sleep_for(std::chrono::milliseconds(1 + std::hash<std::string>{}(j.id) % 4));  // uneven ends
    co_return outcome::done("{}");
  };
  engine e(cfg, st, factory_of(body));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 3'000);
  std::lock_guard<std::mutex> lock(st->m);
  REQUIRE(!st->asked.empty());
  CHECK(*std::min_element(st->asked.begin(), st->asked.end()) >= 50);
  CHECK(st->asked.size() <= 3'000 / 50 + 3);  // the last claims find less, then nothing
  require_nothing_leased(*mem);
}

namespace {
// The memory store, behind a first claim whose answer takes `claim_delay` to come back after the
// leases were written (a store that claims item by item, one round trip each, on a busy link);
// it notes every renewal that arrived after the lease it renews had run out.
class slow_claims final : public store {
 public:
  slow_claims(std::shared_ptr<memory_store> m, std::chrono::milliseconds claim_delay) : mem(std::move(m)), delay(claim_delay) {}
  awaitable<std::vector<job>> claim(claim_request r) override {
    auto got = co_await mem->claim(std::move(r));
    if (!got.empty() && slow_ones++ == 0) co_await sleep_for(delay);  // the first claim only: the run ends
    co_return got;
  }
  awaitable<write_result> complete(std::vector<completion> b) override { co_return co_await mem->complete(std::move(b)); }
  awaitable<renew_result> renew(std::vector<renewal> b, millis lease) override {
    for (const auto& x : b)
      if (const auto it = mem->get(x.ref.id); it && it->lease && it->lease->token == x.ref.token && it->lease->until < store_clock::now())
        ++late_renewals;
    co_return co_await mem->renew(std::move(b), lease);
  }
  awaitable<write_result> release(std::vector<release_item> b) override { co_return co_await mem->release(std::move(b)); }
  awaitable<write_result> fail(std::vector<failure> b) override { co_return co_await mem->fail(std::move(b)); }
  awaitable<store_stats> stats() override { co_return co_await mem->stats(); }
  std::string describe() const override { return "slow claims"; }

  std::shared_ptr<memory_store> mem;
  std::chrono::milliseconds delay;
  int slow_ones = 0;
  std::atomic<int> late_renewals{0};
};
}  // namespace

TEST_CASE("a lease is renewed on the time it began, however long its claim took to come back", "[engine][lease]") {
  auto mem = std::make_shared<memory_store>();
  mem->seed_random_ips(3, 16);
  // Leases of 4 s whose claim comes back 2.6 s after they began; calls of 2 s. Counted from the
  // claim's return, the renewal was due at 4.6 s, past the lease (0.6 s late at best); counted
  // from when the claim was asked, it is due at 2 s and sent at the keeper's first look after
  // the claim came back (by 3.6 s).
  auto st = std::make_shared<slow_claims>(mem, 2'600ms);
  const auto sum = run_long_calls(st, 2'000ms, 1);
  CHECK(sum.completed == 3);
  CHECK(sum.renewals >= 3);
  CHECK(st->late_renewals == 0);
  CHECK(sum.lost_leases == 0);
  require_nothing_leased(*mem);
}
