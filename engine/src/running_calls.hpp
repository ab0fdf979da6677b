// The calls a shard runs (its executor's registry): one coroutine each on the shard's thread,
// each with its cancellation signal and its max_processing deadline. A call is cancelled with
// the others at the shard's stop (cancel_all), or alone when its deadline passes (then it is
// `abandoned`: the shard retries its item as a failed attempt, pipeline_end.hpp). Not
// thread-safe: the shard's thread only.
#pragma once

#include <dibs/net.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <unordered_map>

namespace dibs {

class running_calls {
 public:
  running_calls(net::io_context& ioc, std::chrono::milliseconds max_processing)
      : ioc_(ioc), max_processing_(max_processing) {}
  // Its handlers hold `this`.
  running_calls(const running_calls&) = delete;
  running_calls& operator=(const running_calls&) = delete;

  // Runs the coroutine `make(id)` returns under a cancellation signal of its own; returns its id.
  template <class Make>
  std::uint64_t start(Make make) {
    const auto id = next_id_++;
    auto body = make(id);  // before the entry: a `make` that throws leaves none behind
    auto& call = calls_[id];
    net::co_spawn(ioc_, std::move(body), net::bind_cancellation_slot(call.signal.slot(), [this, id](std::exception_ptr) {
                    // Erased later: the coroutine's cancellation state still points into the
                    // signal until the spawned thread has fully unwound.
                    net::post(ioc_, [this, id] { calls_.erase(id); });
                  }));
    return id;
  }

  // Starts the call's max_processing clock (no deadline when max_processing is 0), again at each
  // request of the call (a batch halved sends its rows again: each request has its own time).
  void arm_deadline(std::uint64_t id);
  // Whether the call's deadline cancelled it.
  bool abandoned(std::uint64_t id) const;
  // The call has ended (its deadline, if armed, is disarmed): call it before the coroutine returns.
  void finished(std::uint64_t id);
  // Cancels every call still running (terminal cancellation).
  void cancel_all();

 private:
  struct call_state {
    // In the map's node itself (a node never moves): one allocation less per call.
    net::cancellation_signal signal;
    std::unique_ptr<net::steady_timer> deadline;  // max_processing
    bool finished = false;
    bool abandoned = false;  // cancelled at max_processing, not at shutdown
  };

  net::io_context& ioc_;
  std::chrono::milliseconds max_processing_;
  std::unordered_map<std::uint64_t, call_state> calls_;
  std::uint64_t next_id_ = 0;
};

}  // namespace dibs
