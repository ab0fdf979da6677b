// A shard whose processor is parked (processor::parked: an adaptive limit on the API below the
// number of shards leaves it no call) claims nothing new and runs what it holds; the last shard
// calling never parks; and the run ends by itself with every item done once, on the memory store
// with two shards.
#include "support/engine_configs.hpp"

#include <dibs/engine.hpp>
#include <dibs/stores/memory_store.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>

using namespace std::chrono_literals;
using dibs::memory_store;
namespace net = dibs::net;

namespace {

struct shared_state {
  std::array<std::atomic<int>, 2> done_by{};  // items each shard processed
  std::atomic<int> done{0};
  std::atomic<int> park_after{0};  // shard 1 parks once it has done this many (0: from the start)
  std::atomic<bool> shard1_called{false};
};

// Calls take 5 ms (4 at once: shard 0 alone needs 125 ms for 100 items, more than the threads'
// start can differ by); shard 1 is parked once it has done `park_after` items, as a limit of 1
// would leave it.
class parking_processor final : public dibs::processor {
 public:
  parking_processor(std::size_t shard, shared_state& s) : shard_(shard), s_(s) {}
  dibs::awaitable<dibs::outcome> process(dibs::job) override {
    net::steady_timer t(co_await net::this_coro::executor, 5ms);
    co_await t.async_wait(net::use_awaitable);
    ++s_.done_by[shard_];
    ++s_.done;
    co_return dibs::outcome::done("{}");
  }
  std::size_t capacity() const override { return 4; }
  bool parked() const override { return shard_ == 1 && s_.done_by[1].load() >= s_.park_after; }

 private:
  std::size_t shard_;
  shared_state& s_;
};

void run(memory_store& st, shared_state& s) {
  auto cfg = dibs::test::config_of(2, 200, 50, 60s);
  cfg.shutdown_timeout = 10s;
  auto shared = std::shared_ptr<memory_store>(&st, [](memory_store*) {});
  dibs::engine e(cfg, shared, [&s](const dibs::shard_info& i) { return std::make_unique<parking_processor>(i.index, s); });
  e.start();
  e.wait();
}

void require_each_done_once(memory_store& st) {
  const auto stats = st.stats_now();
  CHECK(stats.leased_live == 0);
  CHECK(stats.leased_expired == 0);
  for (const auto& it : st.snapshot()) {
    CHECK(it.target_json.has_value());
    CHECK(it.writes == 1);
    CHECK_FALSE(it.lease.has_value());
  }
}

}  // namespace

TEST_CASE("a shard parked from the start claims nothing, and the run ends with every item done by the other") {
  memory_store st;
  st.seed_random_ips(300, 1);
  shared_state s;
  run(st, s);
  // It parks only once shard 0 is seen calling: if it looked first, it made a claim or two.
  CHECK(s.done_by[1] < 100);  // not parked, it does half
  CHECK(s.done_by[0] + s.done_by[1] == 300);
  require_each_done_once(st);
}

TEST_CASE("a shard parked mid-run runs what it holds and claims nothing more, and each item is done once") {
  memory_store st;
  st.seed_random_ips(300, 2);
  shared_state s;
  s.park_after = 10;
  run(st, s);
  CHECK(s.done_by[1] >= 10);  // it worked before it parked ...
  // ... and left the rest to shard 0: it runs what it held (its limit and a claim ahead, 54 at
  // most) and claims nothing more; not parked, it does half (150).
  CHECK(s.done_by[1] < 100);
  CHECK(s.done_by[0] + s.done_by[1] == 300);
  require_each_done_once(st);
}

namespace {
// Shard 1 parks as soon as its first call starts; its calls take 300 ms and ask to be tried again
// the first time. Shard 0's calls take 1 ms: it finishes the rest and ends while shard 1 still
// holds its items, which then come back to the store.
class late_retry_processor final : public dibs::processor {
 public:
  late_retry_processor(std::size_t shard, shared_state& s) : shard_(shard), s_(s) {}
  dibs::awaitable<dibs::outcome> process(dibs::job j) override {
    if (shard_ == 1) s_.shard1_called = true;
    // Shard 0 starts once shard 1 holds items (or after 2 s): the case needs both.
    for (int i = 0; shard_ == 0 && !s_.shard1_called && i < 2000; ++i) {
      net::steady_timer w(co_await net::this_coro::executor, 1ms);
      co_await w.async_wait(net::use_awaitable);
    }
    const bool slow = shard_ == 1 && j.attempts == 1;
    net::steady_timer t(co_await net::this_coro::executor, slow ? 300ms : 1ms);
    co_await t.async_wait(net::use_awaitable);
    if (slow) co_return dibs::outcome::retry(std::chrono::milliseconds{0}, "try again");
    ++s_.done_by[shard_];
    ++s_.done;
    co_return dibs::outcome::done("{}");
  }
  std::size_t capacity() const override { return 4; }
  bool parked() const override { return shard_ == 1 && s_.shard1_called; }

 private:
  std::size_t shard_;
  shared_state& s_;
};
}  // namespace

TEST_CASE("the last shard calling never parks: items a parked shard held that come back after the others ended are done") {
  memory_store st;
  st.seed_random_ips(40, 3);
  shared_state s;
  // Claims of 10: shard 0 (waiting for shard 1 to call) holds a claim's worth, and shard 1 gets
  // items too. (With claims of 50, a whole batch before the finish rate is known, shard 0 at
  // times took all 40 first: shard 1 never called, and the case was not made.)
  auto cfg = dibs::test::config_of(2, 200, 10, 60s);
  cfg.shutdown_timeout = 10s;
  auto shared = std::shared_ptr<memory_store>(&st, [](memory_store*) {});
  dibs::engine e(cfg, shared, [&s](const dibs::shard_info& i) { return std::make_unique<late_retry_processor>(i.index, s); });
  e.start();
  e.wait();  // a parked shard waiting for a limit nothing is left to raise would never return
  CHECK(s.done_by[0] + s.done_by[1] == 40);
  // Shard 1's items were tried again: the case was made.
  const auto items = st.snapshot();
  CHECK(std::any_of(items.begin(), items.end(), [](const auto& it) { return it.attempts >= 2; }));
  require_each_done_once(st);
}
