// The shard's writing side: outcomes wait in three buffers (completions, releases, failures) and
// the flusher writes them in batches -- at the flush size, after the linger, or when the shard
// finishes -- in chunks the store can take (chunked_write.hpp); the keeper renews the leases of
// items still being worked on or waiting. A write the store refuses for one item's content
// costs that item only (answer_refused / failure_refused).
#include "shard.hpp"

#include "chunked_write.hpp"

#include <dibs/log.hpp>
#include "reason_text.hpp"

#include <algorithm>
#include <unordered_set>

namespace dibs {

namespace {
std::unordered_set<std::string> id_set(const std::vector<std::string>& ids) {
  return {ids.begin(), ids.end()};
}

// Between the final attempts to write what is left when the shard ends.
constexpr millis final_retry_pause{100};
}  // namespace

void shard::store_denied_here(const std::string& why) {
  if (ctx_.denied) ctx_.denied(why);
  begin_stopping();
  wake_.notify();
}

template <class Item>
void shard::leave_to_expiry(std::vector<Item>& items, const char* what) {
  log::error("shard ", index_, ": ", items.size(), " ", what, " not written (the store denied it); the items are taken "
             "again once their leases expire");
  for (const auto& x : items) forget(x.ref.id, x.ref.token);
  items.clear();
}
void shard::buffered_one() {
  const auto n = buffered();
  if (n == 1) oldest_buffered_ = steady::now();
  if (n == 1 || n >= cfg_.effective_flush_size() || stopping()) flusher_wake_.notify();
}

awaitable<void> shard::flusher([[maybe_unused]] gate::holder running) {
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
      // The store is failing: keep the outcomes (leases stay renewed) and try again after the
      // backoff, whatever wakes the flusher meanwhile (a new outcome, the dispatcher asking for
      // its outcomes to land): a store that refuses every write must not be sent one a moment.
      // Once the shard is finishing no one else waits, and the few final attempts come quickly.
      const auto failed_at = steady::now();
      auto retry_at = [&] { return failed_at + (finishing() ? std::min(backoff, final_retry_pause) : backoff); };
      while (steady::now() < retry_at()) co_await flusher_wake_.wait_until(retry_at());
      backoff = std::min(backoff * 2, millis{2000});
    }
  }
}

void shard::forget(const std::string& id, std::uint64_t token) {
  auto it = held_.find(id);
  if (it != held_.end() && it->second.token == token) {
    held_.erase(it);
    bump(ctx_.figures.held, -1);
  }
}

std::uint64_t shard::no_data_landed(const std::vector<completion>& batch, const write_result& r) const {
  std::uint64_t n = 0;
  const auto lost = id_set(r.lost);
  for (const auto& x : batch) {
    const auto h = held_.find(x.ref.id);
    if (h == held_.end() || !h->second.no_data || h->second.token != x.ref.token || lost.count(x.ref.id)) continue;
    if (std::none_of(r.refused.begin(), r.refused.end(), [&](const auto& f) { return f.first == x.ref.id; })) ++n;
  }
  return n;
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
    if (s.denied) {
      store_denied_here(s.error);  // the run ends; the caller drops what can't be written
      return;
    }
    log::warn("shard ", index_, ": ", what, " failed (", left, " waiting; retrying): ", s.error);
    ok = false;
  };

  if (!done_buf_.empty()) {
    auto write = [&st](std::vector<completion> b) { return st.complete(std::move(b)); };
    auto landed = [&](const std::vector<completion>& batch, write_result& r) {
      // Of those written, the API's "no data" answers are counted apart (outcome::no_data).
      const std::uint64_t no_data = std::min<std::uint64_t>(r.applied, no_data_landed(batch, r));
      bump(c.completed, r.applied - no_data);
      bump(c.no_data, no_data);
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
    if (s.denied) {
      // The answers can't be written here: the items go back at once (released just below), for
      // a worker with the right to do them again.
      for (const auto& x : done_buf_) release_buf_.push_back(release_item{x.ref, millis{0}, "the store denied the write", 0, true});
      done_buf_.clear();
    }
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
    if (s.denied) leave_to_expiry(release_buf_, "release(s)");
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
    if (s.denied) leave_to_expiry(fail_buf_, "failure record(s)");
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

awaitable<void> shard::keeper([[maybe_unused]] gate::holder running) {
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
    } catch (const store_denied& e) {
      bump(ctx_.figures.store_errors);
      store_denied_here(e.what());
    } catch (const std::exception& e) {
      bump(ctx_.figures.store_errors);
      log::warn("shard ", index_, ": renewing ", due.size(), " lease(s) failed: ", e.what());
    }
  }
}

}  // namespace dibs
