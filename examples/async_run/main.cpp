// A run as an Asio operation: engine::async_run completes with the run's summary through any
// completion token, and cancelling it stops the run. Two runs on the application's own
// io_context, from one coroutine:
//   1. awaited to its end: the store drains;
//   2. under a deadline and the usual signals: SIGINT/SIGTERM stop it gracefully (partial
//      cancellation: calls in flight finish), the deadline at once (terminal: calls are cut short
//      and their items given back). Its processor waits for an answer that never comes, so here
//      the deadline ends it.
// This file is the README's async_run example, compiled and run with the project's tests.
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdio>

namespace net = boost::asio;
using namespace std::chrono_literals;

// Answers every item at once.
class quick_processor final : public dibs::processor {
 public:
  dibs::awaitable<dibs::outcome> process(dibs::job) override { co_return dibs::outcome::done("{\"seen\":true}"); }
};

// Waits a day for each item: only a cancellation ends its calls.
class stalled_processor final : public dibs::processor {
 public:
  dibs::awaitable<dibs::outcome> process(dibs::job) override {
    net::steady_timer day(co_await net::this_coro::executor, 24h);
    co_await day.async_wait(net::use_awaitable);
    co_return dibs::outcome::done("{}");
  }
};

template <class Processor>
dibs::processor_factory factory() {
  return [](const dibs::shard_info&) { return std::make_unique<Processor>(); };
}

int main() {
  net::io_context ioc(1);  // the application's own; one thread runs it. Declared first: it outlives the engines.
  auto first_store = std::make_shared<dibs::memory_store>();
  first_store->seed_random_ips(500, 1);
  auto second_store = std::make_shared<dibs::memory_store>();
  second_store->seed_random_ips(50, 2);
  dibs::engine_config cfg;
  cfg.concurrency = 20;
  dibs::engine first(cfg, first_store, factory<quick_processor>());
  dibs::engine second(cfg, second_store, factory<stalled_processor>());
  bool as_expected = false;

  auto runs = [&]() -> dibs::awaitable<void> {
    // 1. To its end.
    const dibs::run_summary one = co_await first.async_run(ioc, net::use_awaitable);
    std::printf("async_run: first run: %s ended=%s\n", one.line().c_str(), dibs::to_string(one.ended));

    // 2. Stopped by whichever comes first.
    net::cancellation_signal stop;
    net::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
      if (!ec) stop.emit(net::cancellation_type::partial);  // graceful
    });
    net::steady_timer deadline(ioc, 300ms);
    deadline.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) stop.emit(net::cancellation_type::terminal);  // at once
    });
    const dibs::run_summary two = co_await second.async_run(ioc, net::bind_cancellation_slot(stop.slot(), net::use_awaitable));
    signals.cancel();
    deadline.cancel();
    const auto left = second_store->stats_now();
    std::printf("async_run: second run: ended=%s completed=%llu pending=%llu leased=%llu\n", dibs::to_string(two.ended),
                static_cast<unsigned long long>(two.completed), static_cast<unsigned long long>(left.pending),
                static_cast<unsigned long long>(left.leased_live + left.leased_expired));
    as_expected = one.completed == 500 && one.ended == dibs::end_reason::drained && two.ended == dibs::end_reason::stopped &&
                  left.pending == 50;
  };
  net::co_spawn(ioc, runs(), net::detached);
  ioc.run();
  return as_expected ? 0 : 1;
}
