// The engine: N shards (one io_context and thread each), each running bounded pipelines that
// claim -> process -> complete against one store, with a lease keeper and batched writes.
//
// One run, as an Asio operation: it completes with the run's summary, through any completion token
// (use_awaitable, a callback, use_future, deferred), and its cancellation is the stop:
//
//   dibs::engine e(cfg, store, factory);
//   run_summary s = co_await e.async_run(net::use_awaitable);       // shards on threads of their own
//   run_summary s = co_await e.async_run(ioc, net::use_awaitable);  // one shard, on the caller's io_context
//
// Cancelling it (the completion handler's cancellation slot: a cancellation_signal, a parallel
// group, awaitable operators) stops the run: terminal cancellation as stop_now() (in-flight calls
// are cut short and their items released), partial or total as stop() (in-flight calls finish).
// Either way the operation completes, with the summary of what was done (ended == stopped).
//
// The same, without a completion token:
//
//   e.start();            // async_run with a handler that does nothing: shards on their threads
//   e.stop();             // graceful, from any thread (e.g. a signal handler's executor)
//   e.wait();             // until every shard has flushed and ended
//
//   e.start_on(ioc);              // one shard, on the caller's io_context (run by one thread)
//   co_await e.join();            // from a coroutine on any executor: until it has ended
//
// And while it runs, from anywhere:
//
//   e.pause(); e.resume();
//   e.set_concurrency(50);
//   e.set_rate_control(limiter);  // (before the run) then e.set_rate(0.75): 45/min from now on
#pragma once

#include <dibs/counters.hpp>
#include <dibs/net.hpp>
#include <dibs/engine_config.hpp>
#include <dibs/processor.hpp>
#include <dibs/rate_control.hpp>
#include <dibs/run_completion.hpp>
#include <dibs/run_summary.hpp>
#include <dibs/store.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace dibs {

struct shard_context;

// One shard as other threads see it (GET /status, /workers): a snapshot, a moment late.
struct shard_view {
  std::string by;              // the worker id its leases carry: worker_prefix + "-" + index
  std::size_t in_flight = 0;   // calls running
  std::size_t held = 0;        // leases held (running, prefetched, waiting, unwritten)
  std::size_t concurrency = 0; // its share of the pipelines
  std::string breaker;         // the API circuit: "closed", "open" or "probing"
  std::string breaker_reason;  // the last API-level failure it saw ("" when none)
};

class engine {
 public:
  engine(engine_config cfg, std::shared_ptr<store> st, processor_factory factory);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // Starts the run on threads of its own (one per shard) and completes, once every shard has
  // flushed and ended, with its summary: the signature is void(run_summary). The handler runs
  // on its associated executor; a handler without one (a plain callback) runs on the thread of
  // the shard that ended last, and must not destroy the engine there. Its cancellation slot, when
  // connected, stops the run (terminal: stop_now(); partial, total: stop()); emit on the
  // handler's executor. Throws std::logic_error when the engine has run already.
  template <class CompletionToken>
  auto async_run(CompletionToken&& token) {
    return net::async_initiate<CompletionToken, void(run_summary)>(run_initiation{this, nullptr}, token);
  }
  // The same as one shard on `ioc` (cfg.shards is ignored) instead of on threads of its own; a
  // handler without an executor runs on `ioc`. `ioc` must be run by exactly one thread, and
  // outlive the run; the engine must outlive it too.
  template <class CompletionToken>
  auto async_run(net::io_context& ioc, CompletionToken&& token) {
    return net::async_initiate<CompletionToken, void(run_summary)>(run_initiation{this, &ioc}, token);
  }
  // async_run(token) and async_run(ioc, token) with a handler that does nothing: learn of the
  // end from wait(), join(), on_finished() or finished().
  void start();
  void start_on(net::io_context& ioc);
  // Stop claiming (prefetched items are given back; calls in flight finish), and go on.
  // Thread-safe; a paused engine still ends on stop().
  void pause();
  void resume();
  bool paused() const;
  // Thread-safe: the pipelines of the whole process from now on, split across the shards as at
  // start. Growing starts pipelines at once; shrinking starts none until fewer run: no running
  // call is cut short and no claimed item given up. Throws std::invalid_argument below the
  // number of shards (each runs at least one) or above 1,000,000.
  void set_concurrency(std::size_t n);
  std::size_t concurrency() const;
  // The request rate the processors obey, when they let the engine change it (the CLI passes its
  // rate limiter). Set before start().
  void set_rate_control(std::shared_ptr<rate_control> rate);
  bool rate_adjustable() const { return rate_ != nullptr; }
  // Thread-safe: requests per second from now on; <= 0 lifts the limit. Throws std::logic_error
  // when no rate_control was given.
  void set_rate(double per_second);
  // nullopt: no limit (or no rate_control).
  std::optional<double> rate_per_second() const;
  // The worker id's prefix (worker_id, or host-pid): each shard's leases say prefix-<index>.
  const std::string& worker_prefix() const { return cfg_.worker_prefix; }
  // Every shard, in index order; empty before start.
  std::vector<shard_view> shards() const;
  // Completes, on the awaiting coroutine's executor, once every shard has ended.
  awaitable<void> join();
  // Graceful stop: stop claiming, release prefetched items, let in-flight work finish until the
  // shutdown timeout, then cancel and release what is left, flush, end. Idempotent, thread-safe.
  void stop();
  // Stop at once: like stop() with a zero timeout.
  void stop_now();
  // New work may be there (a change stream saw an insert): idle shards claim now instead of
  // waiting out their backoff. Thread-safe.
  void wake();
  // Blocks until every shard has ended.
  void wait();
  // Calls `fn` (from a shard thread) once every shard has ended; at once if it has already.
  // Any number of callbacks may be registered.
  void on_finished(std::function<void()> fn);
  bool finished() const;
  bool stop_requested() const;
  // The run has ended because the store had nothing left for any shard (each checked the store's
  // counts, with its own outcomes written), not because it was stopped.
  bool drained() const;
  // Why the store denied the run a right it needs (store_denied: the store's words, with what to
  // grant), or refused its claims for what they write (store_refused from a claim: no retry can
  // help), once it has: the run then ends at once, every shard of it. nullopt otherwise.
  std::optional<std::string> denied() const;

  const counters& figures() const { return counters_; }
  // The same, for calls the caller makes for the run outside its shards (a pre-flight's, before
  // start): counted with the run's, where the user looks.
  counters& figures() { return counters_; }
  run_summary summary() const;
  const engine_config& config() const { return cfg_; }
  store& the_store() { return *store_; }
  const store& the_store() const { return *store_; }

 private:
  // async_run's initiation: the handler, type-erased, waits in run_state for the end.
  struct run_initiation {
    engine* self;
    net::io_context* ioc;  // null: threads of its own
    template <class Handler>
    void operator()(Handler&& handler) const {
      auto slot = net::get_associated_cancellation_slot(handler);
      if (slot.is_connected()) {
        engine* e = self;
        slot.assign([e](net::cancellation_type type) {
          if ((type & net::cancellation_type::terminal) != net::cancellation_type::none)
            e->stop_now();
          else
            e->stop();
        });
      }
      try {
        self->launch(ioc, std::make_unique<detail::run_completion_of<std::decay_t<Handler>>>(std::forward<Handler>(handler),
                                                                                             fallback_executor(ioc)));
      } catch (...) {
        if (slot.is_connected()) slot.clear();
        throw;
      }
    }
  };
  // Where a handler without an executor of its own runs: on `ioc`, else inline on the thread the
  // run ended on (the system executor).
  static net::any_io_executor fallback_executor(net::io_context* ioc);
  // Starts the shards (on `ioc`, or on threads of their own when null); `done` hears of the end.
  void launch(net::io_context* ioc, std::unique_ptr<detail::run_completion> done);
  // Why the run ended, so far (run_summary::ended).
  end_reason ending() const;

  struct run_state;  // shards, their threads, and how the run ends (engine.cpp)
  shard_context context();  // what each shard shares with the rest of the process
  void shard_ended(bool drained);
  void store_denied(const std::string& why);

  engine_config cfg_;
  std::shared_ptr<store> store_;
  processor_factory factory_;
  counters counters_;
  std::unique_ptr<run_state> run_;
  std::shared_ptr<rate_control> rate_;
};

}  // namespace dibs
