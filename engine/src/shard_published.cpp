// What of a shard other threads may see or change while it runs (engine::shards(),
// engine::set_concurrency): its share of the pipelines, set through its io_context, and a copy of
// its figures that the shard's thread publishes after each change (everything else in a shard
// belongs to its thread alone: shard.hpp).
#include "shard.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace dibs {

void shard::set_concurrency(std::size_t n, std::size_t whole) {
  net::post(ioc_, [this, n, whole] {
    concurrency_ = std::max<std::size_t>(1, n);
    whole_concurrency_ = std::max(whole, concurrency_);
    if (proc_) proc_->concurrency_changed(concurrency_, whole_concurrency_);
    // The default bound on unwritten outcomes follows the pipelines (engine_config::unwritten_limit).
    if (!cfg_.unwritten_limit) unwritten_limit_ = concurrency_ + cfg_.claim_batch;
    publish();
    wake_.notify();
  });
}

void shard::publish() {
  published_in_flight_.store(in_flight_.inside(), std::memory_order_relaxed);
  published_held_.store(held_.size(), std::memory_order_relaxed);
  published_concurrency_.store(concurrency_, std::memory_order_relaxed);
  const auto state = breaker_.current();
  // The reason is copied only while the circuit is not closed, or as it closes: not per item.
  if (state != circuit_breaker::state::closed || published_breaker_.load(std::memory_order_relaxed) != state) {
    std::lock_guard lock(published_mutex_);
    published_reason_ = breaker_.last_reason();
  }
  published_breaker_.store(state, std::memory_order_relaxed);
}

std::string shard::breaker_reason_now() const {
  std::lock_guard lock(published_mutex_);
  return published_reason_;
}

}  // namespace dibs
