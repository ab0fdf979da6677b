#include "connection_slots.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace dibs::http {

namespace {
// `total` over `shards`, the remainder to the first ones.
std::size_t even_share(std::size_t total, std::size_t shards, std::size_t index) {
  if (shards == 0) shards = 1;
  return total / shards + (index % shards < total % shards ? 1 : 0);
}
}  // namespace

std::size_t calling_shards(std::size_t total, std::size_t shards, std::size_t most_per_shard) {
  if (shards == 0) shards = 1;
  if (most_per_shard == 0) most_per_shard = 1;
  const std::size_t enough = total / most_per_shard + (total % most_per_shard ? 1 : 0);  // none past its most
  return std::clamp<std::size_t>(std::max(total / calls_per_shard, enough), 1, shards);
}

std::size_t limit_share(std::size_t total, std::size_t shards, std::size_t index, std::size_t most_per_shard,
                        std::size_t beside) {
  if (shards == 0) shards = 1;
  const std::size_t calling = calling_shards(total, shards, most_per_shard);
  const std::size_t shared = total - std::min(beside, total > calling ? total - calling : 0);
  return index % shards < calling ? even_share(shared, calling, index % shards) : 0;
}

std::size_t connect_share(std::size_t allowed, std::size_t calling, std::size_t index) {
  if (index >= calling) return 1;
  return std::max<std::size_t>(1, even_share(allowed, calling, index));
}

std::size_t bound_share(std::size_t cap, std::size_t calling, std::size_t rank) {
  return connect_share(cap, calling, rank);  // the same split: evenly, one at least
}

std::size_t connection_share(std::size_t total, std::size_t shards, std::size_t index) {
  const std::size_t share = even_share(total, shards, index);
  return share == 0 ? 1 : share;
}

connection_slots::held& connection_slots::held::operator=(held&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = o.owner_;
    o.owner_ = nullptr;
  }
  return *this;
}

void connection_slots::held::reset() {
  if (auto* s = owner_) {
    owner_ = nullptr;
    s->give_back();
  }
}

bool connection_slots::try_take(held& out) {
  if (limit_ == 0) return true;
  if (in_use_ >= limit_ || !queue_.empty()) return false;
  ++in_use_;
  out = held(this);
  return true;
}

awaitable<connection_slots::wait_end> connection_slots::wait(held& out) {
  net::steady_timer timer(co_await net::this_coro::executor, net::steady_timer::time_point::max());
  waiter w{&timer};
  queue_.push_back(&w);
  // However this ends (cancelled, or the wait throwing because the caller was cancelled before
  // it began), a waiter that got no slot leaves the queue.
  struct leave_unless_granted {
    std::deque<waiter*>& queue;
    waiter& w;
    ~leave_unless_granted() {
      if (!w.granted && !w.woken) queue.erase(std::find(queue.begin(), queue.end(), &w));
    }
  } leave{queue_, w};
  co_await timer.async_wait(net::as_tuple(net::use_awaitable));
  if (w.woken) co_return wait_end::woken;  // wake_first took us off the queue
  if (!w.granted) co_return wait_end::cancelled;  // cancelled before a slot came
  out = held(this);  // give_back() handed its slot over and took us off the queue
  co_return wait_end::slot;
}

bool connection_slots::wake_first() {
  if (queue_.empty()) return false;
  waiter* first = queue_.front();
  queue_.pop_front();
  first->woken = true;
  first->timer->cancel();
  return true;
}

void connection_slots::give_back() {
  if (queue_.empty() || (limit_ != 0 && in_use_ > limit_)) {
    --in_use_;  // nobody waits, or the limit went down meanwhile: this slot is gone
    return;
  }
  // Handed straight to the first waiter, so no newcomer overtakes it: in_use_ stays.
  grant_front();
}

void connection_slots::grant_front() {
  waiter* next = queue_.front();
  queue_.pop_front();
  next->granted = true;
  next->timer->cancel();
}

void connection_slots::set_limit(std::size_t limit) {
  limit_ = limit;
  while (!queue_.empty() && (limit_ == 0 || in_use_ < limit_)) {
    ++in_use_;
    grant_front();
  }
}

}  // namespace dibs::http
