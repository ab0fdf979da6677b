// A store whose driver blocks (mongo-c-driver, MariaDB Connector/C): the adapter writes each
// operation as a plain blocking function, and this base runs it on the offload pool and awaits
// it from the shard, which never blocks.
#pragma once

#include <dibs/admin_store.hpp>
#include <dibs/offload.hpp>

#include <utility>

namespace dibs {

class blocking_store : public admin_store {
 public:
  explicit blocking_store(std::size_t threads) : pool_(threads ? threads : 1) {}

  // The blocking forms: what the awaitables run on the pool; also for CLIs and tests.
  virtual std::vector<job> claim_blocking(const claim_request& req) = 0;
  virtual write_result complete_blocking(const std::vector<completion>& batch) = 0;
  virtual renew_result renew_blocking(const std::vector<renewal>& batch, millis lease) = 0;
  virtual write_result release_blocking(const std::vector<release_item>& batch) = 0;
  virtual write_result fail_blocking(const std::vector<failure>& batch) = 0;

  // Each lambda is named before the co_await: g++ 12 double-destroys lambda temporaries there.
  awaitable<std::vector<job>> claim(claim_request req) final {
    auto call = [this, r = std::move(req)] { return claim_blocking(r); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<write_result> complete(std::vector<completion> batch) final {
    auto call = [this, b = std::move(batch)] { return complete_blocking(b); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) final {
    auto call = [this, b = std::move(batch), lease] { return renew_blocking(b, lease); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<write_result> release(std::vector<release_item> batch) final {
    auto call = [this, b = std::move(batch)] { return release_blocking(b); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<write_result> fail(std::vector<failure> batch) final {
    auto call = [this, b = std::move(batch)] { return fail_blocking(b); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<store_stats> stats() final {
    auto call = [this] { return stats_blocking(); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<store_stats> open_stats() final {
    auto call = [this] { return open_stats_blocking(); };
    co_return co_await offload(pool_, std::move(call));
  }
  awaitable<std::optional<std::uint64_t>> open_count() final {
    if (!counts_open()) co_return std::nullopt;  // no trip through the pool for nothing
    auto call = [this] { return open_count_blocking(); };
    const std::uint64_t open = co_await offload(pool_, std::move(call));  // named: g++ 12 and temporaries around co_await
    co_return open;
  }

 protected:
  // Lets queued calls finish; derived destructors call it before tearing down their driver.
  void join_pool() { pool_.join(); }

 private:
  offload_pool pool_;
};

}  // namespace dibs
