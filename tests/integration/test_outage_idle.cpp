// While the API is down, a shard whose probe is due but has nothing to probe with (the items it
// holds are all in calls that hang) and no room to claim one waits for something to change; it
// spun instead, taking a whole core (a run with --api-down-after 1 against a server that answers
// one item 500 and hangs the others: 97% CPU from the probe's first due time on). The waits after
// the breaker's branch counted the probe's due time, already past, as the next thing to wait for.
#include <dibs/engine.hpp>
#include <dibs/stores/memory_store.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "support/engine_configs.hpp"
#include "support/eventually.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The first item called meets an API-level failure (a 500) at every call, the probes' too; every
// other item's call hangs until the run stops.
class one_failure_then_hang final : public processor {
 public:
  explicit one_failure_then_hang(std::atomic<int>& calls) : calls_(calls) {}
  awaitable<outcome> process(job j) override {
    if (calls_++ == 0) failing_ = j.id;
    if (j.id == failing_) co_return outcome::unavailable(10ms, "HTTP 500 Internal Server Error", 500);
    net::steady_timer t(co_await net::this_coro::executor, 60s);
    co_await t.async_wait(net::as_tuple(net::use_awaitable));  // cancelled when the run stops
    co_return outcome::unavailable(10ms, "stopped");
  }

 private:
  std::atomic<int>& calls_;
  std::string failing_;
};

}  // namespace

TEST_CASE("a shard whose API probe is due, with nothing in hand to probe with, waits instead of spinning",
          "[engine][outage]") {
  auto cfg = test::config_of(1, 4, 4, 30s);
  cfg.circuit_trip_after = 1;
  cfg.circuit_probe_min = 50ms;
  cfg.circuit_probe_max = 100ms;
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(4, 3);  // as many as the pipelines: nothing left in the store to claim
  std::atomic<int> calls{0};
  engine e(cfg, st, [&calls](const shard_info&) { return std::make_unique<one_failure_then_hang>(calls); });
  e.start();
  REQUIRE(test::eventually([&] { return load(e.figures().circuit_trips) >= 1 && calls.load() >= 5; }));  // a probe failed too
  // The probe is due 50 ms after the trip; a second of that state, measured in CPU time: a
  // dispatcher that spins burns about a second of it, one that waits next to nothing.
  std::this_thread::sleep_for(100ms);
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(1s);
  const double used = process_cpu_seconds() - before;
  INFO("CPU in a second of the outage: " << used << " s");
  CHECK(used < 0.3);
  e.stop();
  e.wait();
}
