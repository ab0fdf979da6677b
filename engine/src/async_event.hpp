// A wake-up signal for coroutines that share one thread (a shard): waiters sleep until a deadline
// or until notify() wakes them all. Not thread-safe: use it from the executor's thread only.
#pragma once

#include <dibs/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

namespace dibs {

class async_event {
 public:
  using clock = std::chrono::steady_clock;

  // Returns when notified or when `deadline` passes, whichever is first. Never throws for either.
  awaitable<void> wait_until(clock::time_point deadline) {
    net::steady_timer timer(co_await net::this_coro::executor, deadline);
    waiters_.push_back(&timer);
    co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &timer));
  }

  awaitable<void> wait() { return wait_until(clock::time_point::max()); }

  awaitable<void> wait_for(clock::duration d) { return wait_until(clock::now() + d); }

  void notify() {
    for (auto* t : waiters_) t->cancel();
  }

 private:
  std::vector<net::steady_timer*> waiters_;
};

}  // namespace dibs
