#include "shard_link.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <map>
#include <mutex>

namespace dibs::pg {

namespace {
// Destroyed with its io_context: the links (and their connections) go with it.
class link_registry final : public net::execution_context::service {
 public:
  static inline net::execution_context::id id;
  explicit link_registry(net::execution_context& ctx) : net::execution_context::service(ctx) {}

  std::shared_ptr<shard_link> get(std::uint64_t serial) {
    std::lock_guard lock(mutex_);
    auto& link = links_[serial];
    if (!link) link = std::make_shared<shard_link>();
    return link;
  }

 private:
  void shutdown() override {
    std::lock_guard lock(mutex_);
    links_.clear();  // a coroutine still holding one keeps it until it is destroyed
  }
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<shard_link>> links_;
};
}  // namespace

std::shared_ptr<shard_link> link_for(const net::any_io_executor& ex, std::uint64_t serial) {
  auto& ctx = net::query(ex, net::execution::context);
  return net::use_service<link_registry>(ctx).get(serial);
}

awaitable<void> take_turn(std::shared_ptr<shard_link> link) {
  const auto ex = co_await net::this_coro::executor;
  while (link->busy) {
    net::steady_timer wake(ex, net::steady_timer::time_point::max());
    link->waiters.push_back(&wake);
    // However the wait ends (woken, cancelled, the frame destroyed), this waiter leaves the
    // queue; if it was woken for a free link it did not take, the next one is woken instead.
    struct leave {
      shard_link& l;
      net::steady_timer* t;
      ~leave() {
        auto it = std::find(l.waiters.begin(), l.waiters.end(), t);
        if (it != l.waiters.end()) l.waiters.erase(it);
        if (!l.busy && !l.waiters.empty()) l.waiters.front()->cancel();
      }
    } guard{*link, &wake};
    co_await wake.async_wait(net::as_tuple(net::use_awaitable));
    if ((co_await net::this_coro::cancellation_state).cancelled() != net::cancellation_type::none)
      throw boost::system::system_error(net::error::operation_aborted, "waiting for the PostgreSQL connection");
  }
  link->busy = true;
}

void end_turn(shard_link& link) {
  link.busy = false;
  if (!link.waiters.empty()) link.waiters.front()->cancel();
}

}  // namespace dibs::pg
