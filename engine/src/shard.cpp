// The shard's working side: the dispatcher claims (one batch ahead of the pipelines, never while
// outcomes pile up unwritten or the API is down), launches a pipeline per item, and settles each
// outcome into the write buffers. Writing and lease renewal are in shard_writes.cpp; the API
// outage breaker's waiting items in shard_api_outage.cpp.
#include "shard.hpp"

#include "claim_plan.hpp"

#include <dibs/log.hpp>
#include "reason_text.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>

namespace dibs {

shard::shard(shard_context ctx, std::size_t index, std::size_t concurrency, std::string worker_id,
             net::io_context* external)
    : ctx_(std::move(ctx)),
      cfg_(ctx_.cfg),
      index_(index),
      shard_count_(external ? 1 : std::max<std::size_t>(1, cfg_.effective_shards())),
      concurrency_(concurrency),
      by_(std::move(worker_id)),
      unwritten_limit_(cfg_.unwritten_limit ? cfg_.unwritten_limit : concurrency + cfg_.claim_batch),
      ioc_(external ? *external : own_ioc_),
      breaker_(circuit_breaker::settings{cfg_.circuit_trip_after, cfg_.circuit_probe_min, cfg_.circuit_probe_max,
                                         cfg_.circuit_probe_min}),
      published_concurrency_(concurrency) {}

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
  while (!ready_.empty()) {
    settle(ready_.front(), outcome::retry(millis{0}, why), true);
    ready_.pop_front();
  }
}

void shard::request_stop(bool now) {
  net::post(ioc_, [this, now] {
    begin_stopping();
    if (now && !cancel_now_) {
      cancel_now_ = true;
      cancel_pipelines();
    }
    wake_.notify();
  });
}

void shard::begin_stopping() {
  if (phase_ != phase::running) return;
  phase_ = phase::stopping;
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
  info.shards = shard_count_;
  proc_ = ctx_.factory(info);
  net::co_spawn(ioc_, keeper(background_.hold()), net::detached);
  net::co_spawn(ioc_, flusher(background_.hold()), net::detached);

  calling(true);
  try {
    co_await dispatcher();
  } catch (const std::exception& e) {
    log::error("shard ", index_, ": claiming stopped: ", e.what());
    begin_stopping();
  }
  calling(false);
  parked_ = false;

  // Prefetched items were never started, waiting ones wait for an API that is down: give them
  // back at once.
  give_back_prefetched("shutdown");
  give_back_waiting("shutdown");

  // Let in-flight work finish until the deadline (stop_now() cancels it at once), then cancel
  // it; cancelled items are released.
  if (!co_await in_flight_.wait_empty(stop_at_ + cfg_.shutdown_timeout)) {
    log::warn("shard ", index_, ": cancelling ", in_flight_.inside(), " in-flight item(s) at the shutdown deadline");
    cancel_now_ = true;
    cancel_pipelines();
    co_await in_flight_.wait_empty();
  }
  // Calls that ended meanwhile for an API-level reason went to wait: give them back too. Only now
  // can the breaker change no more, so only now does the gauge of open circuits drop this shard.
  give_back_waiting("shutdown");
  if (!breaker_.closed()) bump(ctx_.figures.circuit_open, -1);

  phase_ = phase::finishing;
  flusher_wake_.notify();
  keeper_wake_.notify();
  co_await background_.close();
  publish();
  proc_.reset();  // close connection pools on this thread
}

awaitable<void> shard::dispatcher() {
  auto backoff = cfg_.idle_backoff_min;
  auto next_claim_at = steady::now();

  while (!stopping()) {
    publish();
    if (woken_) {
      woken_ = false;
      backoff = cfg_.idle_backoff_min;
      next_claim_at = steady::now();
    }
    if (paused_) {
      // Other workers may take what we prefetched; what runs, runs to its end.
      give_back_prefetched("paused");
      give_back_waiting("paused");
      co_await wake_.wait();
      next_claim_at = steady::now();
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
      if (!parked) {  // claim at once: a probe of the higher limit measures this shard's calls too
        backoff = cfg_.idle_backoff_min;
        next_claim_at = steady::now();
      }
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
      if (proc_->can_probe_alone()) {
        launch_canary();
        continue;
      }
      if (auto probe = take_probe(probe_claim_empty_)) {
        breaker_.probe_sent(probe->id);
        log::debug("shard ", index_, ": probing the API with item ", probe->id);
        launch(std::move(*probe));
        continue;
      }
      probe_claim = true;  // nothing in hand to probe with: claim one item
    } else {
      release_waiting(steady::now());
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
      const bool holding = in_flight_.inside() > 0 || !ready_.empty() || !waiting_.empty() || !rerun_.empty();
      if (!holding && !cfg_.follow && steady::now() >= next_claim_at) {
        if (co_await nothing_left()) {
          drained_ = !stopping();
          break;
        }
        next_claim_at = steady::now() + backoff;
        backoff = std::min(backoff * 2, cfg_.idle_backoff_max);
      }
      co_await wake_.wait_until(std::min(next_due(), steady::now() + parked_poll));
      continue;
    }

    // Prefetch (claim_plan.hpp): up to `ahead` items claimed beyond those running; with a
    // processor that limits itself (an adaptive limit on the API), only what it will run soon.
    const std::size_t limit = run_limit();
    const std::size_t ahead = claim_ahead(limit);
    const std::size_t want = items_to_claim({limit, ahead, in_flight_.inside(), ready_.size(), rerun_.size(),
                                              waiting_.size(), breaker_.closed(), probe_claim, buffered(),
                                              unwritten_limit_});
    const bool room = want > 0;
    if (!room) {
      co_await wake_.wait_until(next_due());
      continue;
    }
    if (steady::now() < next_claim_at) {
      co_await wake_.wait_until(std::min(next_claim_at, next_due()));
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
    } catch (const std::exception& e) {
      bump(ctx_.figures.store_errors);
      log::warn("shard ", index_, ": claim failed (retrying in ", backoff.count(), " ms): ", e.what());
      next_claim_at = steady::now() + backoff;
      backoff = std::min(backoff * 2, cfg_.idle_backoff_max);
      continue;
    }

    const auto now = steady::now();
    for (auto& j : got) {
      auto [it, inserted] = held_.try_emplace(j.id);
      if (!inserted && it->second.token != j.token) {
        // We held this item before and lost that lease; the new claim supersedes it.
        log::debug("shard ", index_, ": item ", j.id, " reclaimed under a new lease");
      } else {
        bump(ctx_.figures.held);
      }
      it->second = held_lease{j.token, asked + cfg_.lease / 2, now, false, false, 0, j.attempts};
      if (j.attempts > 1) bump(ctx_.figures.retries_waiting, -1);  // a retry (ours, most likely) is back
      ready_.push_back(std::move(j));
    }
    bump(ctx_.figures.claimed, got.size());
    ctx_.figures.claim_batch_size.record(static_cast<double>(got.size()));

    if (probe_claim) probe_claim_empty_ = got.empty();
    if (!got.empty()) {
      backoff = cfg_.idle_backoff_min;
      next_claim_at = now;
      continue;
    }
    if (ready_.empty() && in_flight_.inside() == 0 && waiting_.empty() && rerun_.empty() && !cfg_.follow &&
        co_await nothing_left()) {
      drained_ = !stopping();
      break;
    }
    next_claim_at = steady::now() + backoff;
    backoff = std::min(backoff * 2, cfg_.idle_backoff_max);
  }
}

awaitable<bool> shard::nothing_left() {
  // Our own outcomes must have landed before the store's counts mean anything.
  while ((buffered() > 0 || flushing_) && !stopping()) {
    flusher_wake_.notify();
    co_await wake_.wait();
  }
  store_stats s;
  try {
    s = co_await ctx_.st.stats();
  } catch (const store_denied& e) {
    store_denied_here(e.what());
    co_return false;
  } catch (const std::exception& e) {
    bump(ctx_.figures.store_errors);
    log::warn("shard ", index_, ": stats failed: ", e.what());
    co_return false;
  }
  // Live leases that this process holds (other shards' work) will end with those shards; any
  // other live or expired lease, or anything pending, means there is more to do here.
  const auto held = static_cast<std::uint64_t>(std::max<std::int64_t>(0, load(ctx_.figures.held)));
  co_return s.pending == 0 && s.leased_expired == 0 && s.leased_live <= held;
}

void shard::launch(job j) {
  const auto id = next_pipeline_id_++;
  auto& p = pipelines_[id];
  auto running = in_flight_.hold();
  bump(ctx_.figures.in_flight);
  if (auto h = held_.find(j.id); h != held_.end()) h->second.pipeline = id;
  net::co_spawn(ioc_, pipeline(std::move(j), id, std::move(running)),
                net::bind_cancellation_slot(p.signal.slot(), [this, id](std::exception_ptr) {
                  // Erase later: the coroutine's cancellation state still points into the signal
                  // until the spawned thread has fully unwound.
                  net::post(ioc_, [this, id] { pipelines_.erase(id); });
                }));
  if (!proc_->reports_work_start()) arm_deadline(id);
  publish();
}

void shard::work_started(const job& j) {
  auto h = held_.find(j.id);
  if (h != held_.end() && h->second.token == j.token) arm_deadline(h->second.pipeline);
}

void shard::arm_deadline(std::uint64_t pipeline_id) {
  if (cfg_.max_processing.count() <= 0) return;
  auto it = pipelines_.find(pipeline_id);
  if (it == pipelines_.end() || it->second.finished || it->second.deadline) return;
  it->second.deadline = std::make_unique<net::steady_timer>(ioc_, cfg_.max_processing);
  it->second.deadline->async_wait([this, pipeline_id](boost::system::error_code ec) {
    auto p = pipelines_.find(pipeline_id);
    if (ec || p == pipelines_.end() || p->second.finished) return;
    p->second.abandoned = true;
    p->second.signal.emit(net::cancellation_type::terminal);
  });
}

awaitable<void> shard::pipeline(job j, std::uint64_t pipeline_id, gate::holder in_flight) {
  outcome o;
  bool cancelled = false;
  bool threw = false;
  try {
    o = co_await proc_->process(j);
  } catch (const boost::system::system_error& e) {
    if (e.code() == net::error::operation_aborted) {
      cancelled = true;
    } else {
      o = outcome::retry(millis{1000}, std::string("processor error: ") + e.what());
    }
    threw = true;
  } catch (const std::exception& e) {
    o = outcome::retry(millis{1000}, std::string("processor threw: ") + e.what());
    threw = true;
  }
  bool api_answered = !cancelled;  // an exception or an abandoned call tells nothing of the API
  auto running = pipelines_.find(pipeline_id);
  if (running != pipelines_.end() && running->second.abandoned && o.k != outcome::kind::done) {
    api_answered = false;
    // Past max_processing: retried like any failed call (and counted as an attempt), whether
    // the processor saw the cancellation or swallowed it.
    const auto after = o.k == outcome::kind::retry ? o.after : millis{0};
    o = outcome::retry(after, "abandoned after max_processing " + std::to_string(cfg_.max_processing.count()) + " ms");
    bump(ctx_.figures.abandoned);
    cancelled = false;
  }
  // A processor that swallowed the cancellation reports an error outcome: that item is released
  // for another worker, not retried or failed on our account.
  if (cancel_now_ && o.k != outcome::kind::done) cancelled = true;

  // An API-level failure may make the item wait for the API instead of spending an attempt.
  if (!cancelled && (threw || !api_answered)) breaker_.inconclusive(j.id, steady::now());
  if (cancelled || threw || !api_answered || !wait_for_api(j, o)) settle(j, std::move(o), cancelled);

  if (running != pipelines_.end()) {
    running->second.finished = true;
    if (running->second.deadline) running->second.deadline->cancel();
  }
  in_flight.leave();
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
  auto it = held_.find(j.id);
  if (it == held_.end() || it->second.token != j.token || it->second.lost) {
    // The keeper saw this lease go (expired and taken over): the result must not be written.
    bump(ctx_.figures.lost_leases);
    log::item(log::level::warn, j.id, "lease lost", "the lease expired and was taken over while processing; result discarded");
    if (it != held_.end() && it->second.token == j.token) {
      held_.erase(it);
      bump(ctx_.figures.held, -1);
    }
    return;
  }
  it->second.settled = true;
  ctx_.figures.claim_to_outcome_s.record(std::chrono::duration<double>(steady::now() - it->second.claimed_at).count());

  // Reasons quote what the API said, and the store keeps them: bound them (reason_text.hpp).
  o.why = bounded_reason(std::move(o.why));
  if (cancelled) {
    release_buf_.push_back(release_item{j.ref(), millis{0}, stopping() || o.why.empty() ? "shutdown" : o.why, 0, true});
  } else {
    switch (o.k) {
      case outcome::kind::done:
        if (o.no_data) {
          it->second.no_data = true;
          log::debug("item ", j.id, ": no data: ", o.why);
        }
        done_buf_.push_back(completion{j.ref(), std::move(o.result)});
        break;
      case outcome::kind::retry:
        if (j.attempts >= cfg_.max_attempts) {
          std::string reason = bounded_reason("gave up after " + std::to_string(j.attempts) + " attempts: " + o.why);
          log::item(log::level::warn, j.id, "failed", reason);
          fail_buf_.push_back(failure{j.ref(), std::move(reason), o.http_status, j.attempts});
        } else {
          log::debug("item ", j.id, ": retry in ", o.after.count(), " ms: ", o.why);
          bump(ctx_.figures.retries);
          bump(ctx_.figures.retries_waiting);
          release_buf_.push_back(release_item{j.ref(), o.after, std::move(o.why), o.http_status});
        }
        break;
      case outcome::kind::fail:
        log::item(log::level::warn, j.id, "failed", o.why);
        fail_buf_.push_back(failure{j.ref(), std::move(o.why), o.http_status, j.attempts});
        break;
    }
  }
  buffered_one();
}

void shard::cancel_pipelines() {
  for (auto& [id, p] : pipelines_)
    if (!p.finished) p.signal.emit(net::cancellation_type::terminal);
}

}  // namespace dibs
