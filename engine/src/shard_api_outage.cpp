// The shard's side of the API-outage circuit breaker (circuit_breaker.hpp): an item whose call
// failed for an API-level reason waits under its lease (the keeper renews it) instead of being
// given back, so an outage spends no attempt:
//   - the circuit is open (or opens now): the item waits until the API answers a probe, then
//     runs again before anything new;
//   - the circuit stays closed (one item's 503 among answers): once its retry delay (at least the
//     first probe interval) has passed it is settled as the ordinary retry it was (given back at
//     once: the delay has been waited).
// Waiting items are given back, unprocessed, at a pause or a stop.
#include "shard.hpp"

#include <dibs/log.hpp>

#include <algorithm>

namespace dibs {

bool shard::wait_for_api(const job& j, const outcome& o) {
  // Another item's call (answer reuse): that call's own shard judged the API by it. A probe that
  // got one tells nothing, so another probe is due.
  if (o.shared) breaker_.inconclusive(steady::now());
  if (o.k != outcome::kind::retry || !o.api_down) {
    if (!o.shared && breaker_.answered()) {
      bump(ctx_.figures.circuit_open, -1);
      log::warn("shard ", index_, ": the API answers again; sending resumes, the ", waiting_.size(),
                " item(s) that waited for it first");
      wake_.notify();
    }
    return false;
  }
  const auto now = steady::now();
  const bool was_probing = breaker_.current() == circuit_breaker::state::probing;
  if (o.shared) {
    // Waits under its lease like the call it joined, without counting that call twice.
  } else if (breaker_.failed(o.why, now)) {
    ++trips_;
    bump(ctx_.figures.circuit_trips);
    bump(ctx_.figures.circuit_open);
    log::warn("shard ", index_, ": the API looks down (", breaker_.failures_in_a_row(),
              " calls in a row failed; the last: ", o.why, "): nothing is sent but one probe, first in ",
              breaker_.probe_delay().count(), " ms; items wait under their leases and spend no attempt");
  } else if (was_probing && !breaker_.closed()) {
    log::info("shard ", index_, ": the API is still down (", o.why, "); next probe in ", breaker_.probe_delay().count(), " ms");
  }
  auto h = held_.find(j.id);
  if (h == held_.end() || h->second.token != j.token || h->second.lost) return false;  // settle() tells of it
  // It waits at least as long as the breaker needs to tell one item's trouble from an outage.
  waiting_.push_back(waiting_item{j, o, now + std::max(o.after, cfg_.circuit_probe_min), !breaker_.closed(), trips_});
  bump(ctx_.figures.waiting_for_api);
  return true;
}

bool shard::lease_kept(const job& j) const {
  const auto h = held_.find(j.id);
  return h != held_.end() && h->second.token == j.token && !h->second.lost;
}

void shard::release_waiting(steady::time_point now) {
  release_lost_waiting();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const bool rerun = it->through_outage(trips_);
    if (!rerun && it->not_before > now) {
      ++it;
      continue;
    }
    bump(ctx_.figures.waiting_for_api, -1);
    if (rerun) {
      rerun_.push_back(std::move(it->j));
    } else {
      it->o.after = millis{0};
      settle(it->j, std::move(it->o), false);
    }
    it = waiting_.erase(it);
  }
}

std::optional<job> shard::take_probe() {
  // Waiting items whose lease is gone are settled first (release_waiting does that whatever the
  // breaker's state), so the probe is never spent on an item another worker owns.
  release_lost_waiting();
  std::optional<job> probe;
  if (!rerun_.empty()) {
    probe = std::move(rerun_.front());
    rerun_.pop_front();
  } else if (!waiting_.empty()) {
    probe = std::move(waiting_.front().j);
    waiting_.erase(waiting_.begin());
    bump(ctx_.figures.waiting_for_api, -1);
  } else if (!ready_.empty()) {
    probe = std::move(ready_.front());
    ready_.pop_front();
  }
  return probe;
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
