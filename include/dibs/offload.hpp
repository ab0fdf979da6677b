// The offload adapter: blocking client libraries (mongo-c-driver, MariaDB Connector/C) run on a
// fixed thread pool, and the calling coroutine resumes on its own executor (its shard) with the
// result or the exception.
//
// `co_await post(pool, use_awaitable)` would not do this: it resumes the coroutine *on the pool*.
// Instead the blocking call runs inside a handler posted to the pool, and the completion is
// dispatched back to the awaiting coroutine's executor (as in Asio's callback_wrapper example).
#pragma once

#include <dibs/net.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace dibs {

class offload_pool {
 public:
  explicit offload_pool(std::size_t threads) : pool_(threads), threads_(threads) {}
  ~offload_pool() { join(); }
  offload_pool(const offload_pool&) = delete;
  offload_pool& operator=(const offload_pool&) = delete;

  net::thread_pool::executor_type executor() { return pool_.get_executor(); }
  std::size_t threads() const { return threads_; }

  // Lets queued calls finish, then joins the threads.
  void join() { pool_.join(); }

 private:
  net::thread_pool pool_;
  std::size_t threads_;
};

namespace detail {
// Wraps a void result so that one code path handles both.
struct unit {};
template <class F>
using offload_result_t =
    std::conditional_t<std::is_void_v<std::invoke_result_t<F&>>, unit, std::invoke_result_t<F&>>;
}  // namespace detail

// Runs `f()` on `pool` and completes on the caller's executor (the completion handler's
// associated executor) with void(std::exception_ptr, R): R is f's result (detail::unit for
// void). With the default token, `co_await offload(pool, f)` returns the result, and an exception
// thrown by `f` is rethrown in the coroutine. Cancellation: none; the blocking call always runs to
// its end, so `f` must bound its own time (driver timeouts). `pool` must outlive the call; the
// caller's io_context need only outlive the result's delivery (not the pool thread's return).
template <class F, class CompletionToken = net::use_awaitable_t<>>
auto offload(offload_pool& pool, F f, CompletionToken&& token = net::use_awaitable_t<>()) {
  using R = detail::offload_result_t<F>;
  auto initiation = [p = &pool](auto handler, F fn) {
    // Keep the caller's executor alive (outstanding work) until the result is delivered.
    auto caller_ex = net::prefer(net::get_associated_executor(handler),
                                 net::execution::outstanding_work.tracked);
    net::post(p->executor(), [h = std::move(handler), fn = std::move(fn),
                              caller_ex = std::move(caller_ex)]() mutable {
      std::exception_ptr error;
      std::optional<R> value;
      try {
        if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
          fn();
          value.emplace();
        } else {
          value.emplace(fn());
        }
      } catch (...) {
        error = std::current_exception();
      }
      // The completion carries the caller's work (the tracked executor) and releases it on the
      // caller's thread, once it has run; this thread hands it over through an untracked copy and
      // keeps nothing of the caller's io_context after that. A caller may destroy its io_context as
      // soon as the result is in (the pre-flight runs one until its answer is, then drops it):
      // with the tracked copies released here after the hand-over (net::dispatch's), that release
      // touched a destroyed io_context, and `dibs enrich` died of SIGSEGV about one start in 150
      // (a pre-flight whose spend budget lives in the store, reached through this pool).
      auto target = net::prefer(caller_ex, net::execution::outstanding_work.untracked);
      target.execute([h = std::move(h), error, value = std::move(value), work = std::move(caller_ex)]() mutable {
        std::move(h)(error, value ? std::move(*value) : R{});
      });
    });
  };
  return net::async_initiate<CompletionToken, void(std::exception_ptr, R)>(std::move(initiation), token, std::move(f));
}

}  // namespace dibs
