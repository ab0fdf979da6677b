#include "shared_tokens.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace dibs::http {

std::uint32_t shared_tokens::tokens_per_slot(double per_minute) {
  const double per_second = per_minute / 60;
  return static_cast<std::uint32_t>(std::clamp(std::ceil(per_second * 100e-6), 1.0, 1e6));
}

shared_tokens::shared_tokens(std::shared_ptr<shared_rate> schedule, std::uint32_t per_slot)
    : schedule_(std::move(schedule)), per_slot_(std::max<std::uint32_t>(per_slot, 1)) {}

std::int64_t shared_tokens::from_credit(std::int64_t n) {
  if (credit_ > 0 && std::chrono::steady_clock::now() - credit_at_ > std::chrono::minutes(1)) credit_ = 0;
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
  if (need <= 0) co_return;
  // Whole slots: what the last one holds beyond the request is this process's credit.
  const auto slots = (need + per_slot_ - 1) / per_slot_;
  {
    std::lock_guard lock(mutex_);
    credit_ += slots * per_slot_ - need;
    credit_at_ = std::chrono::steady_clock::now();
  }
  auto ex = co_await net::this_coro::executor;
  for (auto left = slots; left > 0;) {
    const auto ask = static_cast<std::uint32_t>(std::min<std::int64_t>(left, std::numeric_limits<std::uint32_t>::max()));
    const auto t = co_await schedule_->next(ask);
    net::steady_timer timer(ex, t.at);
    co_await timer.async_wait(net::use_awaitable);  // until the last of its slots is due (or the store is asked again)
    if (t.granted) left -= ask;
  }
}

void shared_tokens::settle(std::int64_t reserved, std::int64_t used) {
  if (used < 0) return;  // unknown: what was reserved stands as spent
  std::lock_guard lock(mutex_);
  // What the API did not charge is this process's to spend again, up to a minute of the rate.
  const auto cap = static_cast<std::int64_t>(per_minute());
  credit_ = std::min(credit_ + (reserved - used), std::max<std::int64_t>(cap, 0));
  if (reserved > used) credit_at_ = std::chrono::steady_clock::now();
}

}  // namespace dibs::http
