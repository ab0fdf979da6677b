// engine::async_run's completion handler, type-erased so that the engine itself stays out of
// headers: whatever the token made of it (a coroutine's resumption, a callback, a promise) is held
// here until the run ends, then invoked on its own executor with the run's summary.
#pragma once

#include <dibs/net.hpp>
#include <dibs/run_summary.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <type_traits>
#include <utility>

namespace dibs::detail {

class run_completion {
 public:
  virtual ~run_completion() = default;
  // Called once, from the thread the run ended on. `defer`: that thread is running the shard's
  // own completion (on the caller's io_context), so the handler runs after it, never inside.
  virtual void complete(run_summary s, bool defer) = 0;
};

template <class Handler>
class run_completion_of final : public run_completion {
 public:
  // `fallback`: the executor of a handler that has none of its own.
  run_completion_of(Handler h, const net::any_io_executor& fallback)
      : handler_(std::move(h)),
        // Keeps the handler's executor (an io_context awaiting the run) busy until the run ends.
        work_(net::prefer(net::get_associated_executor(handler_, fallback), net::execution::outstanding_work.tracked)) {}

  void complete(run_summary s, bool defer) override {
    auto last = [h = std::move(handler_), s = std::move(s)]() mutable {
      // On the handler's executor, where its cancellation signal is emitted: once the run has
      // ended, a late emit must not reach the engine any more.
      if (auto slot = net::get_associated_cancellation_slot(h); slot.is_connected()) slot.clear();
      std::move(h)(std::move(s));
    };
    if (defer)
      net::post(work_, std::move(last));
    else
      net::dispatch(work_, std::move(last));
  }

 private:
  Handler handler_;
  // decay_t: for an executor without the outstanding_work property (use_future's), prefer() is
  // the identity and its type an rvalue reference; without the decay, work_ was a reference to
  // the temporary the constructor made, dangling at once.
  std::decay_t<decltype(net::prefer(net::get_associated_executor(std::declval<Handler&>(), std::declval<const net::any_io_executor&>()),
                                    net::execution::outstanding_work.tracked))>
      work_;
};

}  // namespace dibs::detail
