// One shard: an io_context run by one thread, with its own pipelines, processor, prefetch queue,
// completion buffers and lease keeper. Everything here runs on the shard's thread, so no member
// needs a lock; only the store and the counters are shared with other shards, and the published_*
// copies that other threads read (shard_published.cpp).
#pragma once

#include "claim_pacer.hpp"
#include "claim_plan.hpp"
#include "circuit_breaker.hpp"
#include "gate.hpp"
#include "held_leases.hpp"
#include "item_tracer.hpp"
#include "running_calls.hpp"
#include "completer.hpp"
#include "settlement.hpp"
#include "shard_context.hpp"

#include "async_event.hpp"
#include <dibs/counters.hpp>
#include <dibs/engine_config.hpp>
#include <dibs/processor.hpp>
#include <dibs/store.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dibs {

class shard {
 public:
  using steady = std::chrono::steady_clock;

  // `external`: run on the caller's io_context (which one thread must run) instead of its own.
  shard(shard_context ctx, std::size_t index, std::size_t concurrency, std::size_t whole_concurrency, std::string worker_id,
        net::io_context* external = nullptr);

  // Runs the shard until it has drained (or been stopped) and flushed; call on the shard's thread.
  void run();
  // Starts the shard on the external io_context; ctx.ended tells of its end.
  void spawn();
  // Thread-safe. Paused, the shard claims nothing and gives its prefetched items back; calls in
  // flight go on.
  void pause(bool on);
  // Thread-safe. `now` skips the wait for in-flight work.
  void request_stop(bool now);
  // Thread-safe: claim at once, forgetting the idle backoff.
  void wake();

  // Thread-safe: this shard's share of the process's pipelines from now on. Growing launches
  // more at once; shrinking launches none until fewer run (a running call is never cut short).
  // `n`: this shard's part of the engine's `whole` concurrency.
  void set_concurrency(std::size_t n, std::size_t whole);

  const std::string& worker_id() const { return by_; }
  std::size_t index() const { return index_; }
  // Read from any thread (GET /status, /workers): published by the shard's thread.
  std::size_t in_flight_now() const { return published_in_flight_.load(std::memory_order_relaxed); }
  std::size_t held_now() const { return published_held_.load(std::memory_order_relaxed); }
  std::size_t concurrency_now() const { return published_concurrency_.load(std::memory_order_relaxed); }
  circuit_breaker::state breaker_now() const { return published_breaker_.load(std::memory_order_relaxed); }
  std::string breaker_reason_now() const;

 private:
  // An item whose call failed for an API-level reason, kept under its lease (the keeper renews
  // it): re-run when the API answers again if the circuit opened meanwhile; otherwise, once its
  // retry delay has passed, settled as the ordinary retry it was (see shard_api_outage.cpp).
  struct waiting_item {
    job j;
    outcome o;
    steady::time_point not_before;
    bool outage = false;           // the circuit was open when it began to wait
    std::uint64_t trips_then = 0;  // the breaker's trips when it began to wait
    bool outage_elsewhere = false;       // another shard's circuit was open when it began to wait
    std::uint64_t all_trips_then = 0;  // every shard's trips when it began to wait
    bool through_outage(std::uint64_t trips_now) const { return outage || trips_then != trips_now; }
    // Another shard found the API down while this item waited (or had, when it began to): its
    // failure was the outage's, though this shard saw too few failures to tell. Not rerun at
    // once (this shard's circuit is closed: nothing holds it back), but at its due time, once no
    // shard's circuit is open.
    bool outage_seen_elsewhere(std::uint64_t all_trips_now) const {
      return outage_elsewhere || all_trips_then != all_trips_now;
    }
  };

  awaitable<void> main();
  void give_back_prefetched(const std::string& why);
  awaitable<void> dispatcher();
  awaitable<bool> nothing_left();
  // Whether the shard has items in hand: running, claimed and not started, or waiting for the API.
  bool holds_items() const { return in_flight_.inside() > 0 || !ready_.empty() || !waiting_.empty() || !rerun_.empty(); }
  void launch(job j);
  // How many items may run at once now: the concurrency, or the processor's capacity() when it
  // is lower (an adaptive limit on the API).
  std::size_t run_limit() const;
  // How many items to keep claimed beyond those running: a claim batch, or, under a processor's
  // own limit, what the pipelines finish in claim_ahead_time (at least `limit`).
  std::size_t claim_ahead(std::size_t limit);
  static constexpr std::chrono::seconds claim_ahead_time{2};
  // How often a parked shard (processor::parked) looks whether the limit grew: a probe of a
  // higher limit lasts 100 ms or more, and should measure this shard's calls too.
  static constexpr std::chrono::milliseconds parked_poll{10};
  bool parked_ = false;   // parked when the dispatcher last looked
  bool counted_ = false;  // among ctx_.calling_shards (dispatching, not parked)
  void calling(bool on);  // counts this shard among the calling ones, or no longer
  // The processor began `j`'s work (processor::reports_work_start): its max_processing clock starts.
  void work_started(const job& j);
  awaitable<void> pipeline(job j, std::uint64_t pipeline_id, gate::holder in_flight);
  void settle(const job& j, outcome o, bool cancelled);
  // What the item's settlement `s` tells its trace (with the processor's spans).
  void trace_settled(item_trace& t, const settlement& s, std::vector<span_record> calls);
  // shard_api_outage.cpp: the breaker's verdict on one outcome; true if the item now waits.
  bool wait_for_api(const job& j, const outcome& o);
  void api_answered();  // the API answered a call: the circuit closes if it was open
  void api_tripped();  // the circuit just opened: counted and said
  void api_failed(const std::string& item, const std::string& why, bool answered = false);  // an API-level failure of `item`
  // Waiting items whose turn has come: re-run (returned) or settled. Only while closed.
  void release_waiting(steady::time_point now);
  // A probe item: a fresh one in hand, else one waiting that was no probe yet, else (nullopt:
  // claim one) a fresh one from the store while it has any; then one whose call got no answer.
  // nullopt when there is none.
  std::optional<job> take_probe();
  static bool fresh_item(const job& j);  // in its first claim: it never failed
  bool may_probe(const job& j) const;    // fresh, and had no probe's free answer yet
  // The circuit closes without an answer when nothing new is left to probe with and every item
  // waiting was answered: true if it did (shard_api_outage.cpp says why).
  bool stand_down();
  bool lease_kept(const job& j) const;
  void release_lost_waiting();
  steady::time_point next_waiting_due() const;
  // When the dispatcher must look again without being woken: a waiting item's turn, or the
  // breaker's next probe.
  steady::time_point next_due() const;
  void give_back_waiting(const std::string& why);
  // The store denied a right (store_denied): the run ends (ctx_.denied), this shard stops claiming.
  void store_denied_here(const std::string& why);
  awaitable<void> keeper(gate::holder running);
  // Copies what other threads may read (the *_now() getters) after the shard's state changed.
  void publish();

  shard_context ctx_;
  const engine_config& cfg_;
  std::size_t index_;
  std::size_t shard_count_;  // the engine's shards (1 on an external io_context)
  std::size_t concurrency_;
  std::size_t whole_concurrency_;  // every shard's part together (the API limit's ceiling)
  std::string by_;
  std::size_t unwritten_limit_;  // no claims while this many outcomes wait to be written
  net::io_context own_ioc_{1};
  net::io_context& ioc_;  // own_ioc_, or the caller's
  std::unique_ptr<processor> proc_;
  std::unique_ptr<item_tracer> tracer_;  // when the run traces (engine_config::traces)

  std::deque<job> ready_;  // claimed, not yet started
  circuit_breaker breaker_;
  std::uint64_t trips_ = 0;
  std::uint64_t recoveries_ = 0;  // times the circuit closed on an answer
  std::vector<waiting_item> waiting_;
  std::deque<job> rerun_;  // waited through an outage: run again before anything new
  bool probe_claim_empty_ = false;  // a claim for a probe item brought no fresh item: none left
  held_leases held_;  // the lease keeper's book
  running_calls calls_{ioc_, cfg_.max_processing};  // the pipelines, running
  finish_rate finish_rate_{steady::now()};  // pipelines ended per second, for claim_ahead
  gate in_flight_;   // pipelines running
  gate background_;  // the flusher and the keeper

  shard_phase phase_ = shard_phase::running;
  bool stopping() const { return phase_ != shard_phase::running; }
  bool finishing() const { return phase_ == shard_phase::finishing; }
  void begin_stopping();
  bool paused_ = false;
  bool woken_ = false;       // wake() was called: the dispatcher resets its idle backoff
  bool cancel_now_ = false;  // in-flight calls are cancelled, not waited for
  bool drained_ = false;     // the dispatcher ended because the store had nothing left
  steady::time_point stop_at_{};

  async_event wake_;         // a pipeline ended, a flush ended, or a stop was requested
  async_event keeper_wake_;  // finishing

  // Writes the outcomes (its flusher runs beside the keeper, under background_).
  completer completer_{ctx_, held_, phase_, wake_, [this](const std::string& why) { store_denied_here(why); }, index_};

  std::atomic<std::size_t> published_in_flight_{0};
  std::atomic<std::size_t> published_held_{0};
  std::atomic<std::size_t> published_concurrency_{0};
  std::atomic<circuit_breaker::state> published_breaker_{circuit_breaker::state::closed};
  mutable std::mutex published_mutex_;  // guards published_reason_
  std::string published_reason_;
};

}  // namespace dibs
