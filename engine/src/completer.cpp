// The shard's writing side (its completer): outcomes wait in three buffers (outcome_buffers.hpp)
// and the flusher writes them in batches -- at the flush size, after the linger, or when the shard
// stops -- in chunks the store can take (chunked_write.hpp). A write the store refuses for one
// item's content costs that item only (answer_refused / failure_refused); a store that fails is
// tried again after a backoff, the outcomes kept (their leases renewed meanwhile by the keeper).
#include "completer.hpp"

#include "chunked_write.hpp"
#include "reason_text.hpp"

#include <dibs/log.hpp>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace dibs {

namespace {
std::unordered_set<std::string> id_set(const std::vector<std::string>& ids) {
  return {ids.begin(), ids.end()};
}

// Between the final attempts to write what is left when the shard ends.
constexpr millis final_retry_pause{100};
}  // namespace

completer::completer(shard_context& ctx, held_leases& held, const shard_phase& phase, async_event& dispatcher_wake,
                     std::function<void(const std::string&)> denied, std::size_t index)
    : ctx_(ctx), held_(held), phase_(phase), dispatcher_wake_(dispatcher_wake), denied_(std::move(denied)), index_(index) {}

template <class Item>
void completer::leave_to_expiry(std::vector<Item>& items, const char* what) {
  log::error("shard ", index_, ": ", items.size(), " ", what, " not written (the store denied it); the items are taken "
             "again once their leases expire");
  for (const auto& x : items) forget(x.ref.id, x.ref.token);
  items.clear();
}

void completer::buffered_one() {
  if (outcomes_.added(steady::now(), ctx_.cfg.effective_flush_size(), stopping())) flusher_wake_.notify();
}

awaitable<void> completer::flusher([[maybe_unused]] gate::holder running) {
  auto backoff = millis{50};
  while (true) {
    if (outcomes_.size() == 0) {
      if (finishing()) break;
      co_await flusher_wake_.wait();
      continue;
    }
    const auto linger = linger_while(items_running_ && items_running_(), ctx_.cfg.flush_linger, ctx_.cfg.flush_linger_running);
    const auto write_at = outcomes_.write_at(ctx_.cfg.effective_flush_size(), linger, stopping());
    if (steady::now() < write_at) {
      co_await flusher_wake_.wait_until(write_at);
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

void completer::forget(const std::string& id, std::uint64_t token) {
  if (tracer_)
    if (auto* h = held_.under(id, token); h && h->trace) tracer_->finish(*h->trace, &write_);
  if (held_.forget(id, token)) bump(ctx_.figures.held, -1);
  ctx_.st.let_go({lease_ref{id, {}, token}});  // however it ended here: once per claimed item
}

void completer::writing(const char* operation) {
  if (!tracer_) return;
  write_.operation = operation;
  write_.start = std::chrono::system_clock::now();
  if (write_.store.empty()) write_.store = ctx_.st.describe();
}

std::uint64_t completer::no_data_landed(const std::vector<completion>& batch, const write_result& r) const {
  std::uint64_t n = 0;
  const auto lost = id_set(r.lost);
  for (const auto& x : batch) {
    const auto* h = held_.under(x.ref.id, x.ref.token);
    if (!h || !h->no_data || lost.count(x.ref.id)) continue;
    if (std::none_of(r.refused.begin(), r.refused.end(), [&](const auto& f) { return f.first == x.ref.id; })) ++n;
  }
  return n;
}

void completer::answer_refused(const lease_ref& ref, const std::string& why) {
  std::string reason = bounded_reason("the store refused the answer: " + why);
  log::item(log::level::warn, ref.id, "failed", reason);
  auto* h = held_.find(ref.id);
  if (h && h->trace) item_tracer::settled(*h->trace, "failed", reason, 0, true, {});
  add(failure{ref, std::move(reason), 0, h ? h->attempts : 0});
}

void completer::failure_refused(const failure& f, const std::string& why) {
  // A reason too long (or too odd) for the store: record a short one. If even that is refused,
  // the item can't be marked failed here; its lease runs out and a later attempt tries again.
  if (f.reason.size() > short_reason_bytes) {
    failure shorter = f;
    shorter.reason = bounded_reason(f.reason, short_reason_bytes);
    add(std::move(shorter));
    return;
  }
  log::item(log::level::error, f.ref.id, "not recorded",
            "the store refused its failure (" + bounded_reason(why, 200) + "): " + f.reason +
                "; the item is taken again once its lease expires");
  forget(f.ref.id, f.ref.token);
}

awaitable<bool> completer::flush_once() {
  auto& c = ctx_.figures;
  auto& st = ctx_.st;
  flushing_ = true;
  bool ok = true;
  const chunk_limits lim{ctx_.cfg.effective_flush_size(), ctx_.cfg.write_max_bytes};
  auto unavailable = [&](const chunked_write_status& s, const char* what, std::size_t left) {
    if (s.ok) return;
    bump(c.store_errors);
    if (s.denied) {
      denied_(s.error);  // the run ends; the caller drops what can't be written
      return;
    }
    log::warn("shard ", index_, ": ", what, " failed (", left, " waiting; retrying): ", s.error);
    ok = false;
  };

  if (!outcomes_.done.empty()) {
    writing("complete");
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
    const auto s = co_await write_in_chunks(outcomes_.done, lim, write, landed, refused);
    unavailable(s, "writing completions", outcomes_.done.size());
    if (s.denied) {
      // The answers can't be written here: the items go back at once (released just below), for
      // a worker with the right to do them again.
      for (const auto& x : outcomes_.done) outcomes_.releases.push_back(release_item{x.ref, millis{0}, "the store denied the write", 0, true});
      outcomes_.done.clear();
    }
  }
  if (!outcomes_.releases.empty()) {
    writing("release");
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
    const auto s = co_await write_in_chunks(outcomes_.releases, lim, write, landed, refused);
    unavailable(s, "releasing items", outcomes_.releases.size());
    if (s.denied) leave_to_expiry(outcomes_.releases, "release(s)");
  }
  if (!outcomes_.failures.empty()) {
    writing("fail");
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
    const auto s = co_await write_in_chunks(outcomes_.failures, lim, write, landed, refused);
    unavailable(s, "recording failures", outcomes_.failures.size());
    if (s.denied) leave_to_expiry(outcomes_.failures, "failure record(s)");
  }

  if (!ok && finishing()) {
    // At the end there is no one left to retry: the leases will expire and the items be claimed
    // again by the next run (at-least-once), so say what stays behind instead of spinning.
    static constexpr int max_final_attempts = 5;
    if (++final_flush_failures_ >= max_final_attempts) {
      log::error("shard ", index_, ": giving up writing ", outcomes_.size(),
                 " outcome(s); their leases will expire and the items be processed again");
      for (const auto& ref : outcomes_.drop_all()) forget(ref.id, ref.token);
    }
  }
  if (tracer_) tracer_->flush();
  flushing_ = false;
  dispatcher_wake_.notify();
  co_return ok;
}

}  // namespace dibs
