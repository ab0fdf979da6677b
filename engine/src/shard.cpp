// The shard's working side: the dispatcher claims (one batch ahead of the pipelines, never while
// outcomes pile up unwritten or the API is down), launches a pipeline per item, and settles each
// outcome into its completer (completer.cpp writes them). Lease renewal is in shard_keeper.cpp;
// the API outage breaker's waiting items in shard_api_outage.cpp.
#include "claim_refusal.hpp"
#include "shard.hpp"

#include "claim_plan.hpp"
#include "drain_check.hpp"
#include "pipeline_end.hpp"
#include "settlement.hpp"

#include <dibs/log.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>

namespace dibs {

shard::shard(shard_context ctx, std::size_t index, std::size_t concurrency, std::size_t whole_concurrency, std::string worker_id,
             net::io_context* external)
    : ctx_(std::move(ctx)),
      cfg_(ctx_.cfg),
      index_(index),
      shard_count_(external ? 1 : std::max<std::size_t>(1, cfg_.effective_shards())),
      concurrency_(concurrency),
      whole_concurrency_(whole_concurrency),
      by_(std::move(worker_id)),
      unwritten_limit_(cfg_.unwritten_limit ? cfg_.unwritten_limit : concurrency + cfg_.claim_batch),
      ioc_(external ? *external : own_ioc_),
      breaker_(circuit_breaker::settings{cfg_.circuit_trip_after, cfg_.circuit_probe_min, cfg_.circuit_probe_max,
                                         cfg_.circuit_probe_min}),
      published_concurrency_(concurrency) {
  completer_.items_running_by([this] { return in_flight_.inside() > 0; });
  if (cfg_.traces) {
    tracer_ = std::make_unique<item_tracer>(*cfg_.traces, cfg_.trace_sample_ratio, by_);
    completer_.trace_with(tracer_.get());
  }
}

void shard::run() {
  net::co_spawn(ioc_, main(), [this](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      log::error("shard ", index_, ": ended with an error: ", ex.what());
    }
  });
  try {
    ioc_.run();
  } catch (const std::exception& e) {
    log::error("shard ", index_, ": stopped by an error: ", e.what());
  }
  calling(false);  // an error that ended the loop mid-dispatch must not leave this shard counted
  ctx_.ended(drained_);
}

void shard::spawn() {
  net::co_spawn(ioc_, main(), [this](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        log::error("shard ", index_, ": ended with an error: ", ex.what());
      }
    }
    calling(false);
    ctx_.ended(drained_);
  });
}

void shard::calling(bool on) {
  if (on == counted_) return;
  counted_ = on;
  bump(ctx_.calling_shards, on ? 1 : -1);
}

void shard::pause(bool on) {
  net::post(ioc_, [this, on] {
    paused_ = on;
    wake_.notify();
  });
}

void shard::give_back_prefetched(const std::string& why) {
  // Claimed ahead and never started: nothing of them reached the API, so their claims' attempts
  // go back (a run stopped by a spent budget, or by Ctrl-C, costs them nothing).
  while (!ready_.empty()) {
    settle(ready_.front(), outcome::not_sent(why), true);
    ready_.pop_front();
  }
}

void shard::request_stop(bool now) {
  net::post(ioc_, [this, now] {
    begin_stopping();
    if (now && !cancel_now_) {
      cancel_now_ = true;
      calls_.cancel_all();
    }
    wake_.notify();
  });
}

void shard::begin_stopping() {
  if (phase_ != shard_phase::running) return;
  phase_ = shard_phase::stopping;
  stop_at_ = steady::now();
}

void shard::wake() {
  net::post(ioc_, [this] {
    woken_ = true;
    wake_.notify();
  });
}

awaitable<void> shard::main() {
  shard_info info{index_, ioc_.get_executor(), &ctx_.figures};
  info.work_started = [this](const job& j) { work_started(j); };
  info.capacity_changed = [this] { wake_.notify(); };
  info.ceiling = concurrency_;
  info.whole_ceiling = whole_concurrency_;
  info.shards = shard_count_;
  proc_ = ctx_.factory(info);
  net::co_spawn(ioc_, keeper(background_.hold()), net::detached);
  net::co_spawn(ioc_, completer_.flusher(background_.hold()), net::detached);

  calling(true);
  try {
    co_await dispatcher();
  } catch (const std::exception& e) {
    log::error("shard ", index_, ": claiming stopped: ", e.what());
    begin_stopping();
  }
  calling(false);
  parked_ = false;
  proc_->dispatch_ended();

  // Prefetched items were never started, waiting ones wait for an API that is down: give them
  // back at once.
  give_back_prefetched("shutdown");
  give_back_waiting("shutdown");

  // Let in-flight work finish until the deadline (stop_now() cancels it at once), then cancel
  // it; cancelled items are released.
  if (!co_await in_flight_.wait_empty(stop_at_ + cfg_.shutdown_timeout)) {
    // Their calls went out: an API that bills on arrival bills them, and the items are asked
    // again by the next run. Said, with what would have waited for them.
    log::warn("shard ", index_, ": cancelling ", in_flight_.inside(), " in-flight item(s) at the shutdown deadline (",
              std::chrono::duration_cast<std::chrono::seconds>(cfg_.shutdown_timeout).count(),
              " s after the stop): their calls may be billed and are asked again by the next run; a longer shutdown "
              "timeout lets slow calls (an LLM's) finish");
    cancel_now_ = true;
    calls_.cancel_all();
    co_await in_flight_.wait_empty();
  }
  // Calls that ended meanwhile for an API-level reason went to wait: give them back too. Only now
  // can the breaker change no more, so only now does the gauge of open circuits drop this shard.
  give_back_waiting("shutdown");
  if (!breaker_.closed()) bump(ctx_.figures.circuit_open, -1);

  phase_ = shard_phase::finishing;
  completer_.wake();
  keeper_wake_.notify();
  co_await background_.close();
  publish();
  proc_.reset();  // close connection pools on this thread
}

awaitable<void> shard::dispatcher() {
  claim_pacer pacer(cfg_.idle_backoff_min, cfg_.idle_backoff_max, steady::now());

  while (!stopping()) {
    publish();
    if (woken_) {
      woken_ = false;
      pacer.reset(steady::now());
    }
    if (paused_) {
      // Other workers may take what we prefetched; what runs, runs to its end.
      give_back_prefetched("paused");
      give_back_waiting("paused");
      co_await wake_.wait();
      pacer.claim_now(steady::now());
      continue;
    }
    // processor::parked: the API's limit leaves this shard no call. It claims nothing new, runs
    // what it holds (under its floor of one call: given back, those items would each have spent
    // an attempt on a claim and come back at the head of the queue at the next unpark), and ends
    // once the store has nothing left that another shard holds. It parks only while another
    // shard calls: the last one would wait for a limit that nothing is left to raise.
    const auto others_calling = load(ctx_.calling_shards) - (counted_ ? 1 : 0);
    const bool parked = breaker_.closed() && others_calling > 0 && proc_->parked();
    if (parked != parked_) {
      parked_ = parked;
      calling(!parked);
      log::debug("shard ", index_, parked ? ": parked: the API's limit leaves this shard no call" : ": unparked");
      if (!parked) pacer.reset(steady::now());  // claim at once: a probe of the higher limit measures this shard's calls too
    }
    // The API is down (circuit_breaker.hpp): nothing is sent but one probe when it is due.
    bool probe_claim = false;
    if (!breaker_.closed()) {
      if (!breaker_.probe_due(steady::now())) {
        // Until the probe is due (open), or until the probe's outcome wakes us (probing).
        const auto until = breaker_.current() == circuit_breaker::state::open ? breaker_.next_probe()
                                                                              : steady::time_point::max();
        co_await wake_.wait_until(until);
        continue;
      }
      if (auto probe = take_probe()) {
        breaker_.probe_sent(probe->id);
        log::debug("shard ", index_, ": probing the API with item ", probe->id);
        launch(std::move(*probe));
        continue;
      }
      if (stand_down()) continue;
      probe_claim = true;  // nothing in hand to probe with: claim one item
    } else {
      release_waiting(steady::now());
      // The circuit may have opened just now (the failures in a row came to span min_outage with
      // no new one): nothing more is sent but probes. Launched on, the items in hand went into the
      // outage, up to the limit's worth, each a call the API may bill (a test whose API refuses
      // every first call counted them under a loaded CPU: 7 fresh items' calls for 5 trips).
      if (!breaker_.closed()) continue;
      const std::size_t limit = run_limit();
      while (in_flight_.inside() < limit && !rerun_.empty()) {
        launch(std::move(rerun_.front()));
        rerun_.pop_front();
      }
      while (in_flight_.inside() < run_limit() && !ready_.empty()) {
        launch(std::move(ready_.front()));
        ready_.pop_front();
      }
    }

    if (parked) {
      if (!holds_items() && !cfg_.follow && pacer.due(steady::now())) {
        if (co_await nothing_left()) {
          drained_ = !stopping();
          break;
        }
        pacer.idle(steady::now());
      }
      co_await wake_.wait_until(std::min(next_due(), steady::now() + parked_poll));
      continue;
    }

    // Prefetch (claim_plan.hpp): up to `ahead` items claimed beyond those running; with a
    // processor that limits itself (an adaptive limit on the API), only what it will run soon.
    const std::size_t limit = run_limit();
    const std::size_t ahead = claim_ahead(limit);
    // For a probe, only a fresh item in hand counts: one that failed before is no witness.
    const std::size_t in_hand =
        probe_claim ? static_cast<std::size_t>(std::count_if(ready_.begin(), ready_.end(), fresh_item)) : ready_.size();
    const std::size_t want = items_to_claim({limit, ahead, in_flight_.inside(), in_hand, rerun_.size(),
                                              waiting_.size(), breaker_.closed(), probe_claim, completer_.unwritten(),
                                              unwritten_limit_});
    const bool room = want > 0;
    if (!room) {
      co_await wake_.wait_until(next_due());
      continue;
    }
    if (!pacer.due(steady::now())) {
      co_await wake_.wait_until(std::min(pacer.next(), next_due()));
      continue;
    }

    std::vector<job> got;
    // The leases begin at the store while the claim runs, perhaps long before it comes back (a
    // store that claims item by item, or a busy link): renewals count from when it was asked.
    const auto asked = steady::now();
    try {
      // Named, then moved: g++ 12 mishandles class temporaries built inside a co_await expression.
      claim_request req{want, by_, cfg_.lease, cfg_.grace, cfg_.max_attempts};
      got = co_await ctx_.st.claim(std::move(req));
    } catch (const store_denied& e) {
      store_denied_here(e.what());  // the run ends: no retry can help
      break;
    } catch (const store_refused& e) {
      store_denied_here(claim_refusal(e.what()));  // refused for what it writes: again and again
      break;
    } catch (const std::exception& e) {
      bump(ctx_.figures.store_errors);
      log::warn("shard ", index_, ": claim failed (retrying in ", pacer.wait().count(), " ms): ", e.what());
      pacer.idle(steady::now());
      continue;
    }

    const auto now = steady::now();
    for (auto& j : got) {
      if (held_.add(j, asked, now, cfg_.lease, by_))
        bump(ctx_.figures.held);
      else  // held before under another lease, lost, and claimed again: the new lease supersedes it
        log::debug("shard ", index_, ": item ", j.id, " reclaimed under a new lease");
      if (j.attempts > 1) bump(ctx_.figures.retries_waiting, -1);  // a retry (ours, most likely) is back
      if (tracer_) {
        auto t = tracer_->begin(j.id, j.attempts);
        j.trace = t->ctx;
        held_.find(j.id)->trace = std::move(t);
      }
      ready_.push_back(std::move(j));
    }
    bump(ctx_.figures.claimed, got.size());
    ctx_.figures.claim_batch_size.record(static_cast<double>(got.size()));

    if (probe_claim) probe_claim_empty_ = std::none_of(got.begin(), got.end(), fresh_item);
    if (!got.empty()) {
      pacer.reset(now);
      continue;
    }
    if (!holds_items() && !cfg_.follow && co_await nothing_left()) {
      drained_ = !stopping();
      break;
    }
    pacer.idle(steady::now());
  }
}

awaitable<bool> shard::nothing_left() {
  // Our own outcomes must have landed before the store's counts mean anything.
  while (completer_.busy() && !stopping()) {
    completer_.wake();
    co_await wake_.wait();
  }
  // What this process holds (other shards' items) ends with those shards; beyond it, anything
  // open (pending, expired, another worker's lease) means more to do here (drain_check.hpp says
  // when a count within it lets this shard end). Read after each count, as the count saw them.
  auto held = [this] { return static_cast<std::uint64_t>(std::max<std::int64_t>(0, load(ctx_.figures.held))); };
  try {
    const auto open = co_await ctx_.st.open_count();
    const auto verdict = drain_from_open_count(open, held());
    if (verdict != drain_verdict::count_states) co_return verdict == drain_verdict::drained;
    const store_stats s = co_await ctx_.st.open_stats();
    co_return drained_by_stats(s, held());
  } catch (const store_denied& e) {
    store_denied_here(e.what());
  } catch (const std::exception& e) {
    bump(ctx_.figures.store_errors);
    log::warn("shard ", index_, ": stats failed: ", e.what());
  }
  co_return false;
}

void shard::launch(job j) {
  auto running = in_flight_.hold();
  bump(ctx_.figures.in_flight);
  auto* h = held_.find(j.id);
  const auto id = calls_.start([&](std::uint64_t call_id) {
    if (h) {
      h->pipeline = call_id;  // before the pipeline can run: work_started() looks it up
      h->recoveries_at_launch = recoveries_;
    }
    return pipeline(std::move(j), call_id, std::move(running));
  });
  if (!proc_->reports_work_start()) calls_.arm_deadline(id);
  publish();
}

void shard::work_started(const job& j) {
  if (const auto* h = held_.under(j.id, j.token)) calls_.arm_deadline(h->pipeline);
}

awaitable<void> shard::pipeline(job j, std::uint64_t pipeline_id, gate::holder in_flight) {
  outcome o;
  bool aborted = false;
  bool threw = false;
  try {
    o = co_await proc_->process(j);
  } catch (const boost::system::system_error& e) {
    if (e.code() == net::error::operation_aborted) {
      aborted = true;
    } else {
      o = outcome::retry(millis{1000}, std::string("processor error: ") + e.what());
    }
    threw = true;
  } catch (const std::exception& e) {
    o = outcome::retry(millis{1000}, std::string("processor threw: ") + e.what());
    threw = true;
  }
  auto end = pipeline_end_of(std::move(o), aborted, calls_.abandoned(pipeline_id), cancel_now_, cfg_.max_processing);
  if (end.abandoned) bump(ctx_.figures.abandoned);

  // An exception or an abandoned call tells the breaker nothing of the API; an API-level failure
  // may make the item wait for the API instead of spending an attempt.
  if (!end.cancelled && (threw || !end.api_answered)) breaker_.inconclusive(j.id, steady::now());
  // An item whose call was never sent (a budget had none left for it) goes back as it was.
  const bool give_back = end.cancelled || end.o.unsent;
  if (give_back || threw || !end.api_answered || !wait_for_api(j, end.o)) settle(j, std::move(end.o), give_back);

  calls_.finished(pipeline_id);
  in_flight.leave();
  // The last running item ended: its outcome was buffered while it still ran, so the flusher
  // waits the longer linger (outcome_buffers.hpp: linger_while); it looks again now.
  if (in_flight_.inside() == 0) completer_.wake();
  finish_rate_.finished();
  bump(ctx_.figures.in_flight, -1);
  publish();
  wake_.notify();
}

std::size_t shard::run_limit() const {
  const auto cap = proc_->capacity();
  return cap == 0 ? concurrency_ : std::clamp<std::size_t>(cap, 1, concurrency_);
}

std::size_t shard::claim_ahead(std::size_t limit) {
  if (proc_->capacity() == 0) return cfg_.claim_batch;  // no limit of its own: a batch ahead, as always
  return dibs::claim_ahead(limit, cfg_.claim_batch, finish_rate_.per_second(steady::now()), claim_ahead_time);
}

void shard::settle(const job& j, outcome o, bool cancelled) {
  auto* h = held_.under(j.id, j.token);
  if (!h || h->lost) {
    // The keeper saw this lease go (expired and taken over): the result must not be written.
    bump(ctx_.figures.lost_leases);
    log::item(log::level::warn, j.id, "lease lost", "the lease expired and was taken over while processing; result discarded");
    if (h && h->trace) {
      item_tracer::settled(*h->trace, "lease_lost", "the lease expired and was taken over while processing", o.http_status,
                           true, std::move(o.spans));
      tracer_->finish(*h->trace, nullptr);
      tracer_->flush();
    }
    if (held_.forget(j.id, j.token)) bump(ctx_.figures.held, -1);
    ctx_.st.let_go({j.ref()});  // nothing is written for it: the engine is done with this claim
    return;
  }
  h->settled = true;
  ctx_.figures.claim_to_outcome_s.record(std::chrono::duration<double>(steady::now() - h->claimed_at).count());

  auto spans = h->trace ? std::move(o.spans) : std::vector<span_record>{};
  auto s = settlement_of(j, std::move(o), cancelled, stopping(), cfg_.max_attempts);
  if (h->trace) trace_settled(*h->trace, s, std::move(spans));
  switch (s.k) {
    case settlement::kind::complete:
      if (s.no_data) {
        h->no_data = true;
        log::debug("item ", j.id, ": no data: ", s.why);
      }
      break;
    case settlement::kind::retry: {
      const auto& r = std::get<release_item>(s.write);
      log::debug("item ", j.id, ": retry in ", r.delay.count(), " ms: ", r.why);
      bump(ctx_.figures.retries);
      bump(ctx_.figures.retries_waiting);
      break;
    }
    case settlement::kind::give_back:
      break;
    case settlement::kind::fail:
    case settlement::kind::give_up:
      log::item(log::level::warn, j.id, "failed", std::get<failure>(s.write).reason);
      break;
  }
  std::visit([this](auto& write) { completer_.add(std::move(write)); }, s.write);
}

void shard::trace_settled(item_trace& t, const settlement& s, std::vector<span_record> calls) {
  switch (s.k) {
    case settlement::kind::complete:
      item_tracer::settled(t, s.no_data ? "no_data" : "done", s.why, 0, false, std::move(calls));
      break;
    case settlement::kind::retry:
    case settlement::kind::give_back: {
      const auto& r = std::get<release_item>(s.write);
      item_tracer::settled(t, s.k == settlement::kind::retry ? "retried" : "released", r.why, r.http_status, false,
                           std::move(calls));
      break;
    }
    case settlement::kind::fail:
    case settlement::kind::give_up: {
      const auto& f = std::get<failure>(s.write);
      item_tracer::settled(t, "failed", f.reason, f.http_status, true, std::move(calls));
      break;
    }
  }
}

}  // namespace dibs
