#include "answer_reuse.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace dibs::http {

// Touched only on `ex`'s thread (the shard's io_context runs on one thread): the leader posts
// there, so the waiter's timer is never cancelled from another thread.
struct answer_reuse::waiter {
  explicit waiter(net::any_io_executor e) : ex(std::move(e)) {}
  net::any_io_executor ex;
  net::steady_timer* timer = nullptr;  // while the caller waits
  bool woken = false;
  std::optional<outcome> result;
};

answer_reuse::turn answer_reuse::begin(const std::string& key, net::any_io_executor ex) {
  std::lock_guard lock(mutex_);
  turn t;
  if (auto a = cache_.find(key, answer_cache::clock::now())) {
    t.cached = std::move(a);
    return t;
  }
  auto [it, fresh] = calls_.try_emplace(key);
  if (fresh) return t;  // no one calls for it yet: this caller leads
  t.joined = std::make_shared<waiter>(std::move(ex));
  it->second.waiters.push_back(t.joined);
  return t;
}

void answer_reuse::finish(const std::string& key, const outcome* o, answer_cache::clock::time_point arrived) {
  std::vector<std::shared_ptr<waiter>> waiters;
  {
    std::lock_guard lock(mutex_);
    if (o && o->k == outcome::kind::done) cache_.put(key, o->result, arrived);
    auto it = calls_.find(key);
    if (it == calls_.end()) return;
    waiters = std::move(it->second.waiters);
    calls_.erase(it);
  }
  if (waiters.empty()) return;  // the common case: no one joined, nothing to copy
  // One copy of the answer for all the waiters; each takes its own on its own thread.
  const auto result = o ? std::make_shared<const outcome>(*o) : nullptr;
  for (auto& w : waiters)
    net::post(w->ex, [w, result] {
      w->woken = true;
      if (result) w->result = *result;
      if (w->timer) w->timer->cancel();
    });
}

awaitable<std::optional<outcome>> answer_reuse::wait(const std::string& key, std::shared_ptr<waiter> w) {
  net::steady_timer timer(co_await net::this_coro::executor, net::steady_timer::time_point::max());
  w->timer = &timer;
  // Ends when the leader's post cancels the timer, or when this caller is cancelled.
  co_await timer.async_wait(net::as_tuple(net::use_awaitable));
  w->timer = nullptr;
  if (w->woken) co_return std::move(w->result);
  {
    std::lock_guard lock(mutex_);
    if (auto it = calls_.find(key); it != calls_.end()) std::erase(it->second.waiters, w);
  }
  throw boost::system::system_error(net::error::operation_aborted);
}

std::size_t answer_reuse::cached_entries() const {
  std::lock_guard lock(mutex_);
  return cache_.entries();
}

std::size_t answer_reuse::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cache_.bytes();
}

std::size_t answer_reuse::calls_in_flight() const {
  std::lock_guard lock(mutex_);
  return calls_.size();
}

std::size_t answer_reuse::waiters(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = calls_.find(key);
  return it == calls_.end() ? 0 : it->second.waiters.size();
}

outcome shared_outcome(const outcome& leader, std::chrono::milliseconds own_backoff) {
  outcome o = leader;
  o.shared = true;
  if (o.k == outcome::kind::retry) o.after = std::max(o.after, own_backoff);
  return o;
}

}  // namespace dibs::http
