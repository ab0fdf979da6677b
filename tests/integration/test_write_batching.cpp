// How the completer groups outcomes into writes (engine/src/outcome_buffers.hpp: linger_while),
// through a whole engine run on the memory store: the store's write calls are counted.
#include "support/engine_configs.hpp"

#include <adapters/stores/forwarding_store.hpp>
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {

// The memory store, its completion writes counted.
class counted_writes final : public forwarding_store<> {
 public:
  explicit counted_writes(std::shared_ptr<memory_store> inner) : inner_(std::move(inner)) {}
  awaitable<write_result> complete(std::vector<completion> batch) override {
    writes.fetch_add(1);
    written.fetch_add(batch.size());
    return inner_->complete(std::move(batch));
  }
  std::atomic<int> writes{0};
  std::atomic<std::size_t> written{0};

 protected:
  store& inner() const override { return *inner_; }

 private:
  std::shared_ptr<memory_store> inner_;
};

// Each item done after a wait of its own, 0-49 ms: a claim's items end over 50 ms, not together.
class spread_processor final : public processor {
 public:
  awaitable<outcome> process(job j) override {
    const auto wait = std::chrono::milliseconds(std::hash<std::string>{}(j.id) % 50);
    net::steady_timer t(co_await net::this_coro::executor, wait);
    co_await t.async_wait(net::use_awaitable);
    co_return outcome::done("{}");
  }
};

// 100 items ending over 50 ms, one claim: how many completion writes carried them.
int writes_for(std::chrono::milliseconds running_linger) {
  auto mem = std::make_shared<memory_store>();
  mem->seed_random_ips(100, 5);
  counted_writes st(mem);
  auto cfg = test::config_of(1, 100, 100, 60s);
  cfg.flush_linger_running = running_linger;
  {
    // `st` outlives the engine: a non-owning handle.
    engine e(cfg, std::shared_ptr<store>(&st, [](store*) {}),
             [](const shard_info&) -> std::unique_ptr<processor> { return std::make_unique<spread_processor>(); });
    e.start();
    e.wait();
    CHECK(e.summary().completed == 100);
  }
  CHECK(st.written.load() == 100);
  return st.writes.load();
}

}  // namespace

TEST_CASE("outcomes of items that end over 50 ms wait for a full write while items run, not the 5 ms linger") {
  // One claim of 100, its outcomes in one write when the flush fills (two if the machine stalls
  // the run past the 100 ms linger). With the 5 ms linger alone: about ten (the test below).
  const int writes = writes_for(100ms);
  INFO("writes: " << writes);
  CHECK(writes <= 2);
}

TEST_CASE("a running linger of 0 writes as the 5 ms linger does: several writes for items that end over 50 ms") {
  // The same run with the old rule: what the test above would read without it.
  const int writes = writes_for(0ms);
  INFO("writes: " << writes);
  CHECK(writes >= 3);
}
