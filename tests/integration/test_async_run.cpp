// engine::async_run as an Asio operation: it completes with the run's summary through any
// completion token, and the completion handler's cancellation slot stops the run (terminal as
// stop_now(), partial and total as a graceful stop()), with every claimed item written or
// given back to the store.
#include "support/eventually.hpp"

#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <optional>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// Every call waits until the test opens the gate (polling it every millisecond): the calls in
// flight are known exactly when the test cancels. A terminal cancellation interrupts the wait.
struct gate_state {
  std::atomic<bool> open{false};
};

class gated_processor final : public processor {
 public:
  explicit gated_processor(std::shared_ptr<gate_state> gate) : gate_(std::move(gate)) {}
  awaitable<outcome> process(job) override {
    net::steady_timer tick(co_await net::this_coro::executor);
    while (!gate_->open.load()) {
      tick.expires_after(1ms);
      co_await tick.async_wait(net::use_awaitable);  // throws operation_aborted when cancelled
    }
    co_return outcome::done("{\"ok\":true}");
  }

 private:
  std::shared_ptr<gate_state> gate_;
};

processor_factory gated(std::shared_ptr<gate_state> gate) {
  return [gate](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<gated_processor>(gate); };
}

engine_config async_config(std::size_t shards) {
  engine_config c;
  c.shards = shards;
  c.concurrency = 8;
  c.claim_batch = 4;
  c.lease = 60s;
  c.shutdown_timeout = 1h;  // a graceful stop waits for the calls: only a terminal one cuts them short
  return c;
}

std::shared_ptr<memory_store> seeded(std::size_t n) {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(n, 30);
  return st;
}

void require_no_lease_left(memory_store& st) {
  const auto s = st.stats_now();
  CHECK(s.leased_live == 0);
  CHECK(s.leased_expired == 0);
}
}  // namespace

TEST_CASE("async_run completes with the run's summary through use_awaitable", "[engine][async_run]") {
  auto gate = std::make_shared<gate_state>();
  gate->open = true;
  auto st = seeded(300);
  const bool on_caller = GENERATE(true, false);
  INFO((on_caller ? "one shard on the caller's io_context" : "two shards on threads of their own"));
  net::io_context ioc(1);  // before the engine: it outlives the shard that ran on it
  engine e(async_config(2), st, gated(gate));
  std::optional<run_summary> got;
  auto body = [&]() -> awaitable<void> {
    // The awaiting io_context has no other work while a threaded run goes on: the operation
    // keeps it from running out.
    if (on_caller)
      got = co_await e.async_run(ioc, net::use_awaitable);
    else
      got = co_await e.async_run(net::use_awaitable);
  };
  net::co_spawn(ioc, body(), net::detached);
  ioc.run();
  REQUIRE(got.has_value());
  CHECK(got->completed == 300);
  CHECK(got->failed == 0);
  CHECK(got->ended == end_reason::drained);
  CHECK(std::string(to_string(got->ended)) == "drained");
  CHECK(e.finished());
  CHECK(e.drained());
  CHECK(st->stats_now().done == 300);
}

TEST_CASE("async_run completes with the run's summary through a plain callback and use_future", "[engine][async_run]") {
  auto gate = std::make_shared<gate_state>();
  gate->open = true;
  SECTION("a callback without an executor: called once, on the thread the run ended on") {
    auto st = seeded(200);
    engine e(async_config(2), st, gated(gate));
    std::promise<run_summary> ended;
    std::atomic<int> calls{0};
    e.async_run([&](run_summary s) {
      ++calls;
      ended.set_value(std::move(s));
    });
    const auto s = ended.get_future().get();
    e.wait();
    CHECK(calls == 1);
    CHECK(s.completed == 200);
    CHECK(s.ended == end_reason::drained);
    CHECK(s.line().rfind("summary: completed=200 failed=0 lost_leases=0 released=0 ", 0) == 0);
  }
  SECTION("use_future") {
    auto st = seeded(200);
    engine e(async_config(2), st, gated(gate));
    auto s = e.async_run(net::use_future).get();
    CHECK(s.completed == 200);
    CHECK(s.ended == end_reason::drained);
  }
  SECTION("a second run of the same engine is refused") {
    auto st = seeded(10);
    engine e(async_config(1), st, gated(gate));
    auto first = e.async_run(net::use_future);
    CHECK_THROWS_AS(e.async_run([](run_summary) {}), std::logic_error);
    CHECK(first.get().completed == 10);
  }
}

namespace {
// Runs 100 gated items on eight pipelines, `on_caller` as one shard on the test's io_context or
// as two on threads of their own; once all eight calls are in flight, emits `type` on the
// signal bound to async_run's handler (on the handler's executor, as Asio asks), and with
// `open_after` opens the gate. Returns the summary the operation completed with.
run_summary cancelled_run(net::io_context& ioc, engine& e, net::cancellation_type type, bool on_caller, gate_state& gate,
                          bool open_after) {
  net::cancellation_signal signal;
  std::optional<run_summary> got;
  auto handler = net::bind_cancellation_slot(signal.slot(), net::bind_executor(ioc, [&](run_summary s) { got = s; }));
  if (on_caller)
    e.async_run(ioc, std::move(handler));
  else
    e.async_run(std::move(handler));
  auto driver = [&]() -> awaitable<void> {
    net::steady_timer tick(ioc);
    for (int i = 0; i < 60'000 && load(e.figures().in_flight) < 8; ++i) {  // a minute at most
      tick.expires_after(1ms);
      co_await tick.async_wait(net::use_awaitable);
    }
    signal.emit(type);
    if (open_after) gate.open = true;
  };
  net::co_spawn(ioc, driver(), net::detached);
  ioc.run();  // until the run has ended and its handler ran: the bound executor is kept busy
  REQUIRE(got.has_value());
  return *got;
}
}  // namespace

TEST_CASE("terminal cancellation of async_run stops the run at once, as stop_now does, losing no item", "[engine][async_run]") {
  auto gate = std::make_shared<gate_state>();  // never opened: only cutting the calls short ends the run
  auto st = seeded(100);
  const bool on_caller = GENERATE(true, false);
  INFO((on_caller ? "on the caller's io_context" : "on threads of its own"));
  net::io_context ioc(1);
  engine e(async_config(on_caller ? 1 : 2), st, gated(gate));
  const auto s = cancelled_run(ioc, e, net::cancellation_type::terminal, on_caller, *gate, false);
  // A graceful stop would wait an hour (shutdown_timeout) for the eight calls: this one ended.
  CHECK(s.ended == end_reason::stopped);
  CHECK(s.completed == 0);
  CHECK(s.failed == 0);
  CHECK(s.released >= 8);  // the eight cut short, and whatever was prefetched
  const auto after = st->stats_now();
  CHECK(after.pending == 100);  // every item claimed went back
  CHECK(after.done == 0);
  require_no_lease_left(*st);
}

TEST_CASE("partial and total cancellation of async_run stop it gracefully: calls in flight finish", "[engine][async_run]") {
  auto gate = std::make_shared<gate_state>();
  auto st = seeded(100);
  const auto type = GENERATE(net::cancellation_type::partial, net::cancellation_type::total);
  const bool on_caller = GENERATE(true, false);
  INFO((type == net::cancellation_type::partial ? "partial" : "total") << (on_caller ? ", on the caller's io_context" : ", on threads"));
  net::io_context ioc(1);
  engine e(async_config(on_caller ? 1 : 2), st, gated(gate));
  const auto s = cancelled_run(ioc, e, type, on_caller, *gate, true);
  CHECK(s.ended == end_reason::stopped);
  CHECK(s.completed >= 8);   // the eight calls in flight when it was cancelled were let finish
  CHECK(s.completed < 100);  // and it claimed no more than it had
  CHECK(s.failed == 0);
  const auto after = st->stats_now();
  CHECK(after.done == s.completed);  // every result that finished was written
  CHECK(after.pending == 100 - after.done);
  require_no_lease_left(*st);
}
