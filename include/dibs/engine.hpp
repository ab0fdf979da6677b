// The engine: N shards (one io_context and thread each), each running bounded pipelines that
// claim -> process -> complete against one store, with a lease keeper and batched writes.
//
//   dibs::engine e(cfg, store, factory);
//   e.start();            // shards run on their own threads
//   e.stop();             // graceful, from any thread (e.g. a signal handler's executor)
//   e.wait();             // until every shard has flushed and ended
//
// Embedded in a server that has its own io_context (run by one thread):
//
//   e.start_on(ioc);              // one shard, on the caller's io_context
//   co_await e.join();            // from a coroutine on any executor: until it has ended
//   e.pause(); e.resume();        // from anywhere
//   e.set_concurrency(50);        // from anywhere, while it runs
//   e.set_rate_control(limiter);  // then e.set_rate(0.75): 45/min from now on
#pragma once

#include <dibs/counters.hpp>
#include <dibs/net.hpp>
#include <dibs/engine_config.hpp>
#include <dibs/processor.hpp>
#include <dibs/rate_control.hpp>
#include <dibs/store.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs {

struct shard_context;

struct run_summary {
  std::uint64_t completed = 0;  // done with data
  std::uint64_t failed = 0;
  std::uint64_t no_data = 0;    // done with the API's "no data" answer (outcome::no_data): not failed
  std::uint64_t lost_leases = 0;
  std::uint64_t released = 0;
  std::uint64_t retries = 0;
  std::uint64_t renewals = 0;
  double elapsed_s = 0;
  // Answer reuse (counters.hpp): all 0 when the processor does not reuse answers.
  std::uint64_t answer_calls = 0;
  std::uint64_t answers_reused = 0;
  std::uint64_t answers_joined = 0;
  std::uint64_t answers_from_store = 0;  // of answers_reused: kept in the store by a process before
  // Members an adapter adds to json() (",\"api_limits\":[...]" from the HTTP processors): the
  // engine knows nothing of them.
  std::string extra_json;
  double docs_per_s() const { return elapsed_s > 0 ? static_cast<double>(completed + no_data) / elapsed_s : 0; }
  bool reuses_answers() const { return answer_calls + answers_reused + answers_joined > 0; }
  // The share of items answered without a call of their own (reused or joined), 0..1.
  double answer_hit_ratio() const {
    const auto all = answer_calls + answers_reused + answers_joined;
    return all > 0 ? static_cast<double>(answers_reused + answers_joined) / static_cast<double>(all) : 0;
  }
  // `summary: completed=N failed=N lost_leases=N released=N elapsed_s=X docs_per_s=X`, then
  // ` no_data=N` when some items got the API's "no data" answer, then with answer reuse ` api_calls=N reused=N joined=N hit_ratio=X` (and ` from_store=N` when the store
  // keeps answers too).
  std::string line() const;
  std::string json() const;
};

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

  void start();
  // Runs as one shard on `ioc` (cfg.shards is ignored) instead of on threads of its own. `ioc`
  // must be run by exactly one thread, and outlive the run; the engine must outlive it too.
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
  // --rate limiter). Set before start().
  void set_rate_control(std::shared_ptr<rate_control> rate);
  bool rate_adjustable() const { return rate_ != nullptr; }
  // Thread-safe: requests per second from now on; <= 0 lifts the limit. Throws std::logic_error
  // when no rate_control was given.
  void set_rate(double per_second);
  // nullopt: no limit (or no rate_control).
  std::optional<double> rate_per_second() const;
  // The worker id's prefix (--worker-id, or host-pid): each shard's leases say prefix-<index>.
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
  // grant), once it has: the run then ends at once, every shard of it. nullopt otherwise.
  std::optional<std::string> denied() const;

  const counters& figures() const { return counters_; }
  run_summary summary() const;
  const engine_config& config() const { return cfg_; }
  store& the_store() { return *store_; }
  const store& the_store() const { return *store_; }

 private:
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
