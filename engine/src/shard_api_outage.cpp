// The shard's side of the API-outage circuit breaker (circuit_breaker.hpp): an item whose call
// failed for an API-level reason waits under its lease (the keeper renews it) instead of being
// given back, so an outage spends no attempt:
//   - the circuit is open (or opens now): the item waits until the API answers a probe, then
//     runs again before anything new;
//   - the circuit stays closed (one item's 503 among answers): once its retry delay (at least the
//     first probe interval) has passed it is settled as the ordinary retry it was (given back at
//     once: the delay has been waited).
// Items that fail alone must still end: an item that already waited through an outage and gets a
// 5xx again while the API answers others, or a probe that was a probe before and gets a 5xx
// again, spends its attempt like any retry. So a run whose last items all get a 500 ends with
// them failed, while an API that refuses connections (or answers 5xx to a request it answered
// before: the canary) costs no attempt however long it is down.
// Waiting items are given back, unprocessed, at a pause or a stop.
#include "shard.hpp"

#include <dibs/log.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>

namespace dibs {

void shard::api_answered() {
  if (!breaker_.answered()) return;
  ++recoveries_;
  bump(ctx_.figures.circuit_open, -1);
  probe_claim_empty_ = false;
  log::warn("shard ", index_, ": the API answers again; sending resumes, the ", waiting_.size(),
            " item(s) that waited for it first");
  wake_.notify();
}

void shard::api_tripped() {
  ++trips_;
  bump(ctx_.figures.circuit_trips);
  bump(ctx_.figures.circuit_open);
  log::warn("shard ", index_, ": the API looks down (", breaker_.failures_in_a_row(),
            " items' calls in a row failed; the last: ", breaker_.last_reason(), "): nothing is sent but one probe, first in ",
            breaker_.probe_delay().count(), " ms; items wait under their leases and spend no attempt");
}

void shard::api_failed(const std::string& item, const std::string& why, bool answered) {
  const bool was_probing = breaker_.current() == circuit_breaker::state::probing;
  if (breaker_.failed(item, why, steady::now(), answered)) {
    api_tripped();
  } else if (was_probing && breaker_.current() == circuit_breaker::state::open) {
    log::info("shard ", index_, ": the API is still down (", why, "); next probe in ", breaker_.probe_delay().count(), " ms");
  }
}

bool shard::wait_for_api(const job& j, const outcome& o) {
  // Another item's call (answer reuse): that call's own shard judged the API by it. A probe that
  // got one tells nothing, so another probe is due.
  if (o.shared) breaker_.inconclusive(j.id, steady::now());
  if (o.k != outcome::kind::retry || !o.api_down) {
    if (o.local)
      breaker_.inconclusive(j.id, steady::now());  // never sent: if it was the probe, another is due
    else if (!o.shared)
      api_answered();  // an answer from the API, whatever it says of the item
    return false;
  }
  auto* h = held_.under(j.id, j.token);
  if (!h || h->lost) {
    if (!o.shared) breaker_.inconclusive(j.id, steady::now());
    return false;  // settle() tells of it
  }
  // The API answered, with a 5xx: about this item, or about the API? Not a second time for one item.
  // Sent before the API came back, answered after: the answer is the outage's, read late (a
  // loaded server answers in its own order, a busy client reads late). It is no news of the API
  // now (the breaker does not count it: a burst of them would start a new streak) and it runs
  // again, as the items that waited through the outage do.
  if (breaker_.closed() && h->recoveries_at_launch != recoveries_) {
    h->excused = true;
    rerun_.push_back(j);
    wake_.notify();
    return true;
  }
  const bool answered_5xx = o.http_status >= 500;
  const bool reprobe = breaker_.is_probe(j.id) && reprobe_ == j.id;
  if (!o.shared) api_failed(j.id, o.why, answered_5xx);
  if (answered_5xx && (reprobe || (h->excused && breaker_.closed()))) return false;  // an ordinary retry

  // It waits at least as long as the breaker needs to tell one item's trouble from an outage
  // (5xx answers open the circuit once they span min_outage: twice that leaves room for the last
  // of them).
  const auto now = steady::now();
  const auto least = answered_5xx ? 2 * breaker_.min_outage() : cfg_.circuit_probe_min;
  waiting_.push_back(waiting_item{j, o, now + std::max(o.after, least), !breaker_.closed(), trips_,
                                  load(ctx_.figures.circuit_open) > 0, load(ctx_.figures.circuit_trips)});
  bump(ctx_.figures.waiting_for_api);
  return true;
}

bool shard::lease_kept(const job& j) const {
  return held_.kept(j.id, j.token);
}

void shard::release_waiting(steady::time_point now) {
  release_lost_waiting();
  // Every pipeline may be waiting, so no new failure comes to tell the breaker that the failures
  // in a row now span its min_outage: time does (before the waits below end as retries).
  if (breaker_.outage_held(now)) api_tripped();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const bool rerun = it->through_outage(trips_);
    if (!rerun && it->not_before > now) {
      ++it;
      continue;
    }
    bump(ctx_.figures.waiting_for_api, -1);
    // Each shard judges the API by its own calls: one with few calls in flight may see too few
    // failures to trip while another shard's circuit opens. Its items failed in that outage too.
    if (rerun || it->outage_seen_elsewhere(load(ctx_.figures.circuit_trips))) {
      // Its one free pass: if it fails alone again, it spends its attempt (wait_for_api).
      if (auto* h = held_.find(it->j.id)) h->excused = true;
      rerun_.push_back(std::move(it->j));
    } else {
      it->o.after = millis{0};
      settle(it->j, std::move(it->o), false);
    }
    it = waiting_.erase(it);
  }
}

std::optional<job> shard::take_probe(bool allow_probed) {
  // Waiting items whose lease is gone are settled first (release_waiting does that whatever the
  // breaker's state), so the probe is never spent on an item another worker owns.
  release_lost_waiting();
  reprobe_.clear();
  std::optional<job> probe;
  // A fresh item first (it never failed), then one that waited and was not a probe yet.
  if (!ready_.empty()) {
    probe = std::move(ready_.front());
    ready_.pop_front();
    return probe;
  }
  const auto fresh = [this](const job& j) { return !breaker_.was_probed(j.id); };
  if (auto r = std::find_if(rerun_.begin(), rerun_.end(), fresh); r != rerun_.end()) {
    probe = std::move(*r);
    rerun_.erase(r);
    return probe;
  }
  if (auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const waiting_item& x) { return fresh(x.j); });
      w != waiting_.end()) {
    probe = std::move(w->j);
    waiting_.erase(w);
    bump(ctx_.figures.waiting_for_api, -1);
    return probe;
  }
  if (!allow_probed) return probe;
  // Nothing new to probe with (the store has nothing left): one that was a probe already. If the
  // API answers it with a 5xx again, that is its own trouble, and it spends its attempt.
  if (!rerun_.empty()) {
    probe = std::move(rerun_.front());
    rerun_.pop_front();
  } else if (!waiting_.empty()) {
    probe = std::move(waiting_.front().j);
    waiting_.erase(waiting_.begin());
    bump(ctx_.figures.waiting_for_api, -1);
  }
  if (probe) reprobe_ = probe->id;
  return probe;
}

void shard::launch_canary() {
  breaker_.probe_sent("");
  log::debug("shard ", index_, ": probing the API with a request it answered before");
  calls_.start([this](std::uint64_t call_id) { return canary(call_id, in_flight_.hold()); });
}

awaitable<void> shard::canary(std::uint64_t pipeline_id, gate::holder in_flight) {
  api_check c;
  try {
    c = co_await proc_->api_answers();
  } catch (const std::exception&) {
    c = api_check{};  // cancelled or broken: it tells nothing
  }
  if (c.v == api_check::verdict::answers)
    api_answered();
  else if (c.v == api_check::verdict::down)
    api_failed("", c.why);
  else
    breaker_.inconclusive("", steady::now());
  calls_.finished(pipeline_id);
  in_flight.leave();
  publish();
  wake_.notify();
}

// The keeper found these leases gone while they waited: no call for them; settle() counts the loss.
void shard::release_lost_waiting() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (lease_kept(it->j)) {
      ++it;
      continue;
    }
    bump(ctx_.figures.waiting_for_api, -1);
    settle(it->j, std::move(it->o), true);
    it = waiting_.erase(it);
  }
}

shard::steady::time_point shard::next_waiting_due() const {
  auto due = steady::time_point::max();
  for (const auto& w : waiting_)
    if (!w.through_outage(trips_)) due = std::min(due, w.not_before);
  return due;
}

shard::steady::time_point shard::next_due() const {
  if (breaker_.closed()) return next_waiting_due();
  // A call that ended while the dispatcher was busy may have opened the circuit: its probe is
  // due then, whether or not anything wakes the dispatcher. Nothing waiting is released while
  // the circuit is not closed. A probe already due is the dispatcher's to send now, not a time
  // to wait for: with nothing in hand to probe with it waits for its claim (the pacer) or a wake,
  // where waiting until a time past spun a core (97% CPU through an outage).
  const auto probe = breaker_.current() == circuit_breaker::state::open ? breaker_.next_probe() : steady::time_point::max();
  return probe > steady::now() ? probe : steady::time_point::max();
}

void shard::give_back_waiting(const std::string& why) {
  for (auto& w : waiting_) {
    bump(ctx_.figures.waiting_for_api, -1);
    rerun_.push_back(std::move(w.j));
  }
  waiting_.clear();
  while (!rerun_.empty()) {
    settle(rerun_.front(), outcome::retry(millis{0}, why), true);
    rerun_.pop_front();
  }
}

}  // namespace dibs
