#include "shard.hpp"

#include "chunked_write.hpp"

#include <dibs/log.hpp>
#include <dibs/reason_text.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>
#include <unordered_set>

namespace dibs {

namespace {
std::unordered_set<std::string> id_set(const std::vector<std::string>& ids) {
  return {ids.begin(), ids.end()};
}
}  // namespace

shard::shard(shard_context ctx, std::size_t index, std::size_t concurrency, std::string worker_id,
             net::io_context* external)
    : ctx_(std::move(ctx)),
      cfg_(ctx_.cfg),
      index_(index),
      concurrency_(concurrency),
      by_(std::move(worker_id)),
      unwritten_limit_(cfg_.unwritten_limit ? cfg_.unwritten_limit : concurrency + cfg_.claim_batch),
      ioc_(external ? *external : own_ioc_) {}

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
    ctx_.ended(drained_);
  });
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
  proc_ = ctx_.factory(info);
  background_.enter();
  net::co_spawn(ioc_, keeper(), net::detached);
  background_.enter();
  net::co_spawn(ioc_, flusher(), net::detached);

  try {
    co_await dispatcher();
  } catch (const std::exception& e) {
    log::error("shard ", index_, ": claiming stopped: ", e.what());
    begin_stopping();
  }

  // Prefetched items were never started: give them back at once.
  give_back_prefetched("shutdown");

  // Let in-flight work finish until the deadline (stop_now() cancels it at once), then cancel
  // it; cancelled items are released.
  if (!co_await in_flight_.wait_empty(stop_at_ + cfg_.shutdown_timeout)) {
    log::warn("shard ", index_, ": cancelling ", in_flight_.inside(), " in-flight item(s) at the shutdown deadline");
    cancel_now_ = true;
    cancel_pipelines();
    co_await in_flight_.wait_empty();
  }

  phase_ = phase::finishing;
  flusher_wake_.notify();
  keeper_wake_.notify();
  co_await background_.wait_empty();
  proc_.reset();  // close connection pools on this thread
}

awaitable<void> shard::dispatcher() {
  auto backoff = cfg_.idle_backoff_min;
  auto next_claim_at = steady::now();
  const std::size_t batch = cfg_.claim_batch;

  while (!stopping()) {
    if (woken_) {
      woken_ = false;
      backoff = cfg_.idle_backoff_min;
      next_claim_at = steady::now();
    }
    if (paused_) {
      // Other workers may take what we prefetched; what runs, runs to its end.
      give_back_prefetched("paused");
      co_await wake_.wait();
      next_claim_at = steady::now();
      continue;
    }
    while (in_flight_.inside() < concurrency_ && !ready_.empty()) {
      launch(std::move(ready_.front()));
      ready_.pop_front();
    }

    // Prefetch: keep up to one batch claimed ahead of the pipelines -- unless outcomes are piling
    // up unwritten (the store is down): claiming more would only grow memory and leases.
    const bool room = ready_.size() < batch && in_flight_.inside() + ready_.size() < concurrency_ + batch &&
                      buffered() < unwritten_limit_;
    if (!room) {
      co_await wake_.wait();
      continue;
    }
    if (steady::now() < next_claim_at) {
      co_await wake_.wait_until(next_claim_at);
      continue;
    }

    const std::size_t want = std::min(batch, concurrency_ + batch - in_flight_.inside() - ready_.size());
    std::vector<job> got;
    try {
      // Named, then moved: g++ 12 mishandles class temporaries built inside a co_await expression.
      claim_request req{want, by_, cfg_.lease, cfg_.grace};
      got = co_await ctx_.st.claim(std::move(req));
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
      it->second = held_lease{j.token, now + cfg_.lease / 2, now, false, false, 0, j.attempts};
      ready_.push_back(std::move(j));
    }
    bump(ctx_.figures.claimed, got.size());
    ctx_.figures.claim_batch_size.record(static_cast<double>(got.size()));

    if (!got.empty()) {
      backoff = cfg_.idle_backoff_min;
      next_claim_at = now;
      continue;
    }
    if (ready_.empty() && in_flight_.inside() == 0 && !cfg_.follow && co_await nothing_left()) {
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
  p.signal = std::make_unique<net::cancellation_signal>();
  in_flight_.enter();
  bump(ctx_.figures.in_flight);
  if (auto h = held_.find(j.id); h != held_.end()) h->second.pipeline = id;
  net::co_spawn(ioc_, pipeline(std::move(j), id),
                net::bind_cancellation_slot(p.signal->slot(), [this, id](std::exception_ptr) {
                  // Erase later: the coroutine's cancellation state still points into the signal
                  // until the spawned thread has fully unwound.
                  net::post(ioc_, [this, id] { pipelines_.erase(id); });
                }));
  if (!proc_->reports_work_start()) arm_deadline(id);
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
    p->second.signal->emit(net::cancellation_type::terminal);
  });
}

awaitable<void> shard::pipeline(job j, std::uint64_t pipeline_id) {
  outcome o;
  bool cancelled = false;
  try {
    o = co_await proc_->process(j);
  } catch (const boost::system::system_error& e) {
    if (e.code() == net::error::operation_aborted) {
      cancelled = true;
    } else {
      o = outcome::retry(millis{1000}, std::string("processor error: ") + e.what());
    }
  } catch (const std::exception& e) {
    o = outcome::retry(millis{1000}, std::string("processor threw: ") + e.what());
  }
  auto running = pipelines_.find(pipeline_id);
  if (running != pipelines_.end() && running->second.abandoned && o.k != outcome::kind::done) {
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

  settle(j, std::move(o), cancelled);

  if (running != pipelines_.end()) {
    running->second.finished = true;
    if (running->second.deadline) running->second.deadline->cancel();
  }
  in_flight_.leave();
  bump(ctx_.figures.in_flight, -1);
  wake_.notify();
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

void shard::buffered_one() {
  const auto n = buffered();
  if (n == 1) oldest_buffered_ = steady::now();
  if (n == 1 || n >= cfg_.effective_flush_size() || stopping()) flusher_wake_.notify();
}

awaitable<void> shard::flusher() {
  auto backoff = millis{50};
  while (true) {
    if (buffered() == 0) {
      if (finishing()) break;
      co_await flusher_wake_.wait();
      continue;
    }
    const auto due = oldest_buffered_ + cfg_.flush_linger;
    if (!stopping() && buffered() < cfg_.effective_flush_size() && steady::now() < due) {
      co_await flusher_wake_.wait_until(due);
      continue;
    }
    if (co_await flush_once()) {
      backoff = millis{50};
    } else {
      // The store is failing: keep the outcomes (leases stay renewed) and try again.
      co_await flusher_wake_.wait_for(backoff);
      backoff = std::min(backoff * 2, millis{2000});
    }
  }
  background_.leave();
}

void shard::forget(const std::string& id, std::uint64_t token) {
  auto it = held_.find(id);
  if (it != held_.end() && it->second.token == token) {
    held_.erase(it);
    bump(ctx_.figures.held, -1);
  }
}

void shard::answer_refused(const lease_ref& ref, const std::string& why) {
  std::string reason = bounded_reason("the store refused the answer: " + why);
  log::item(log::level::warn, ref.id, "failed", reason);
  const auto h = held_.find(ref.id);
  fail_buf_.push_back(failure{ref, std::move(reason), 0, h != held_.end() ? h->second.attempts : 0});
  buffered_one();
}

void shard::failure_refused(const failure& f, const std::string& why) {
  // A reason too long (or too odd) for the store: record a short one. If even that is refused,
  // the item can't be marked failed here; its lease runs out and a later attempt tries again.
  if (f.reason.size() > short_reason_bytes) {
    failure shorter = f;
    shorter.reason = bounded_reason(f.reason, short_reason_bytes);
    fail_buf_.push_back(std::move(shorter));
    buffered_one();
    return;
  }
  log::item(log::level::error, f.ref.id, "not recorded",
            "the store refused its failure (" + bounded_reason(why, 200) + "): " + f.reason +
                "; the item is taken again once its lease expires");
  forget(f.ref.id, f.ref.token);
}

awaitable<bool> shard::flush_once() {
  auto& c = ctx_.figures;
  auto& st = ctx_.st;
  flushing_ = true;
  bool ok = true;
  const chunk_limits lim{cfg_.effective_flush_size(), cfg_.write_max_bytes};
  auto unavailable = [&](const chunked_write_status& s, const char* what, std::size_t left) {
    if (s.ok) return;
    bump(c.store_errors);
    log::warn("shard ", index_, ": ", what, " failed (", left, " waiting; retrying): ", s.error);
    ok = false;
  };

  if (!done_buf_.empty()) {
    auto write = [&st](std::vector<completion> b) { return st.complete(std::move(b)); };
    auto landed = [&](const std::vector<completion>& batch, write_result& r) {
      bump(c.completed, r.applied);
      bump(c.lost_leases, r.lost.size());
      for (const auto& id : r.lost) log::item(log::level::warn, id, "lease lost", "the lease was gone when the result was written; result discarded");
      // Refused answers are still ours: they are failed (fenced) with the store's reason.
      std::unordered_map<std::string, std::string> refused(r.refused.begin(), r.refused.end());
      for (const auto& x : batch) {
        if (auto why = refused.find(x.ref.id); why != refused.end()) answer_refused(x.ref, why->second);
        else forget(x.ref.id, x.ref.token);
      }
    };
    auto refused = [&](completion& x, const std::string& why) { answer_refused(x.ref, why); };
    const auto s = co_await write_in_chunks(done_buf_, lim, write, landed, refused);
    unavailable(s, "writing completions", done_buf_.size());
  }
  if (!release_buf_.empty()) {
    auto write = [&st](std::vector<release_item> b) { return st.release(std::move(b)); };
    auto refused = [&](const release_item& x, const std::string& why) {
      // Giving the item back early is all a release does: let its lease run out instead.
      log::item(log::level::warn, x.ref.id, "not released", "the store refused the release (" + bounded_reason(why, 200) +
                                                                 "); the item is taken again once its lease expires");
      forget(x.ref.id, x.ref.token);
    };
    auto landed = [&](const std::vector<release_item>& batch, write_result& r) {
      const auto lost = id_set(r.lost);
      std::unordered_map<std::string, std::string> refusals(r.refused.begin(), r.refused.end());
      for (const auto& x : batch) {
        if (auto why = refusals.find(x.ref.id); why != refusals.end()) {
          refused(x, why->second);
          continue;
        }
        if (x.unprocessed && !lost.count(x.ref.id)) bump(c.released);
        forget(x.ref.id, x.ref.token);
      }
      bump(c.lost_leases, r.lost.size());
    };
    const auto s = co_await write_in_chunks(release_buf_, lim, write, landed, refused);
    unavailable(s, "releasing items", release_buf_.size());
  }
  if (!fail_buf_.empty()) {
    auto write = [&st](std::vector<failure> b) { return st.fail(std::move(b)); };
    auto landed = [&](const std::vector<failure>& batch, write_result& r) {
      bump(c.failed, r.applied);
      bump(c.lost_leases, r.lost.size());
      std::unordered_map<std::string, std::string> refused(r.refused.begin(), r.refused.end());
      for (const auto& x : batch) {
        if (auto why = refused.find(x.ref.id); why != refused.end()) failure_refused(x, why->second);
        else forget(x.ref.id, x.ref.token);
      }
    };
    auto refused = [&](failure& x, const std::string& why) { failure_refused(x, why); };
    const auto s = co_await write_in_chunks(fail_buf_, lim, write, landed, refused);
    unavailable(s, "recording failures", fail_buf_.size());
  }

  if (!ok && finishing()) {
    // At the end there is no one left to retry: the leases will expire and the items be claimed
    // again by the next run (at-least-once), so say what stays behind instead of spinning.
    static constexpr int max_final_attempts = 5;
    if (++final_flush_failures_ >= max_final_attempts) {
      log::error("shard ", index_, ": giving up writing ", buffered(),
                 " outcome(s); their leases will expire and the items be processed again");
      for (const auto& x : done_buf_) forget(x.ref.id, x.ref.token);
      for (const auto& x : release_buf_) forget(x.ref.id, x.ref.token);
      for (const auto& x : fail_buf_) forget(x.ref.id, x.ref.token);
      done_buf_.clear();
      release_buf_.clear();
      fail_buf_.clear();
    }
  }
  flushing_ = false;
  wake_.notify();
  co_return ok;
}

awaitable<void> shard::keeper() {
  const auto interval = std::clamp<steady::duration>(cfg_.lease / 4, millis{5}, millis{5000});
  while (!finishing()) {
    co_await keeper_wake_.wait_for(interval);
    if (finishing()) break;

    const auto now = steady::now();
    std::vector<renewal> due;
    for (const auto& [id, h] : held_)
      if (!h.lost && h.renew_due <= now) due.push_back(renewal{lease_ref{id, by_, h.token}});
    if (due.empty()) continue;

    try {
      auto r = co_await ctx_.st.renew(due, cfg_.lease);
      bump(ctx_.figures.renewals, r.applied);
      const auto lost = id_set(r.lost);
      for (const auto& x : due) {
        auto it = held_.find(x.ref.id);
        if (it == held_.end() || it->second.token != x.ref.token) continue;
        if (lost.count(x.ref.id)) {
          // Only in-flight items can lose a lease here; for settled ones the write itself tells.
          if (!it->second.settled) it->second.lost = true;
        } else {
          it->second.renew_due = now + cfg_.lease / 2;
        }
      }
    } catch (const std::exception& e) {
      bump(ctx_.figures.store_errors);
      log::warn("shard ", index_, ": renewing ", due.size(), " lease(s) failed: ", e.what());
    }
  }
  background_.leave();
}

void shard::cancel_pipelines() {
  for (auto& [id, p] : pipelines_)
    if (!p.finished) p.signal->emit(net::cancellation_type::terminal);
}

}  // namespace dibs
