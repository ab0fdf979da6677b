#include "shared_tokens.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <limits>

namespace dibs::http {

shared_tokens::shared_tokens(std::shared_ptr<shared_rate> schedule) : schedule_(std::move(schedule)) {}

std::int64_t shared_tokens::from_credit(std::int64_t n) {
  const auto need = n - credit_;
  credit_ = need > 0 ? 0 : -need;
  return std::max<std::int64_t>(need, 0);
}

awaitable<void> shared_tokens::take(std::int64_t n) {
  std::int64_t need;
  {
    std::lock_guard lock(mutex_);
    need = from_credit(std::max<std::int64_t>(n, 0));
  }
  auto ex = co_await net::this_coro::executor;
  while (need > 0) {
    const auto ask = static_cast<std::uint32_t>(std::min<std::int64_t>(need, std::numeric_limits<std::uint32_t>::max()));
    const auto t = co_await schedule_->next(ask);
    net::steady_timer timer(ex, t.at);
    co_await timer.async_wait(net::use_awaitable);  // until the last of its tokens is due (or the store is asked again)
    if (t.granted) need -= ask;
  }
}

void shared_tokens::settle(std::int64_t reserved, std::int64_t used) {
  if (used < 0) return;  // unknown: what was reserved stands as spent
  std::lock_guard lock(mutex_);
  // What the API did not charge is this process's to spend again, up to a minute of the rate.
  const auto cap = static_cast<std::int64_t>(per_minute());
  credit_ = std::min(credit_ + (reserved - used), std::max<std::int64_t>(cap, 0));
}

}  // namespace dibs::http
