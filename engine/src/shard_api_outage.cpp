// The shard's side of the API-outage circuit breaker (circuit_breaker.hpp): an item whose call
// failed for an API-level reason waits under its lease (the keeper renews it) instead of being
// given back, so an outage spends no attempt:
//   - the circuit is open (or opens now): the item waits until the API answers a probe, then
//     runs again before anything new;
//   - the circuit stays closed (one item's 503 among answers): once its retry delay (at least the
//     first probe interval) has passed it is settled as the ordinary retry it was (given back at
//     once: the delay has been waited).
// An answer is a call the API saw (and may bill), so max_attempts must bound them: in its first
// claim (an item given back before with a failure is as likely failing alone) an item's answered
// 5xx is free once as it begins to wait and once as the breaker's probe, and every other answered
// 5xx spends its attempt like any retry, whatever the breaker thinks. So a run whose last items
// all get a 500 ends with them failed after max_attempts answers and two more at most (9 calls
// each for max_attempts 3 before), while an API that refuses connections (no answer: nothing
// reached it) costs no attempt however long it is down. The probes are items, sent for their own
// answers: never a request the API answered already.
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
  const bool answered_5xx = o.http_status >= 500;
  // Its one free answer used already (in this claim, or it failed in an earlier one).
  const bool pass_used = h->excused || j.attempts > 1;
  if (breaker_.closed() && h->recoveries_at_launch != recoveries_) {
    if (answered_5xx && pass_used) return false;  // an ordinary retry
    h->excused = true;
    rerun_.push_back(j);
    wake_.notify();
    return true;
  }
  // The breaker's probe, answered 5xx: free once (the outage it tests is not the item's doing).
  const bool probe_pass = breaker_.is_probe(j.id) && !h->probed && j.attempts <= 1;
  if (!o.shared) api_failed(j.id, o.why, answered_5xx);
  if (answered_5xx && probe_pass) {
    h->probed = true;
  } else if (answered_5xx) {
    if (pass_used) return false;  // an ordinary retry: it spends its attempt
    h->excused = true;            // its free answer as a waiter
  }

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
  if (breaker_.outage_held(now)) {
    // The circuit opens now: they wait on (run again now, each would be a second call into the
    // outage, and its 5xx would spend its attempt).
    api_tripped();
    return;
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const bool rerun = it->through_outage(trips_);
    if (!rerun && it->not_before > now) {
      ++it;
      continue;
    }
    // Its failure was an outage another shard is still in: it runs again once that one's circuit
    // closes too (sent now, its next 5xx would spend its attempt: it had its free answer).
    if (!rerun && it->outage_seen_elsewhere(load(ctx_.figures.circuit_trips)) && load(ctx_.figures.circuit_open) > 0) {
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

bool shard::fresh_item(const job& j) { return j.attempts <= 1; }

bool shard::may_probe(const job& j) const {
  const auto* h = held_.under(j.id, j.token);
  return fresh_item(j) && h && !h->probed;
}

std::optional<job> shard::take_probe() {
  // Waiting items whose lease is gone are settled first (release_waiting does that whatever the
  // breaker's state), so the probe is never spent on an item another worker owns.
  release_lost_waiting();
  // A fresh item (never failed: in its first claim), and an item that waits after an answered 5xx
  // and had no probe's answer yet, in turn, fresh first. A fresh one's answer tells the API's
  // state from the items' own (one that failed in an earlier claim is no witness: its 5xx may be
  // its own, as it was the last time); but an API that refuses every item's first request
  // answers its second, which only a waiting one can be: fresh ones alone, 40 of them in hand
  // took 40 probes, a second and more apart, to find it up. A fresh one is claimed from the store
  // for it (nullopt) until a claim brings none.
  const auto take_fresh = [&]() -> std::optional<job> {
    const auto f = std::find_if(ready_.begin(), ready_.end(), fresh_item);
    if (f == ready_.end()) return std::nullopt;
    std::optional<job> probe = std::move(*f);
    ready_.erase(f);
    return probe;
  };
  // The first waiting item `pred` takes, out of the waiting ones.
  const auto take_waiting = [&](auto pred) -> std::optional<job> {
    const auto w = std::find_if(waiting_.begin(), waiting_.end(), pred);
    if (w == waiting_.end()) return std::nullopt;
    std::optional<job> probe = std::move(w->j);
    waiting_.erase(w);
    bump(ctx_.figures.waiting_for_api, -1);
    return probe;
  };
  const auto take_answered = [&] { return take_waiting([&](const waiting_item& x) { return x.o.http_status != 0 && may_probe(x.j); }); };
  const bool answered_turn = breaker_.probes() % 2 == 1;
  if (auto p = answered_turn ? take_answered() : take_fresh()) return p;
  if (auto p = answered_turn ? take_fresh() : take_answered()) return p;
  if (!probe_claim_empty_) return std::nullopt;
  // Nothing new left: an item whose call got no answer (refused, reset, timed out) probes, one not
  // probed yet first: nothing of it reached the API, nothing is spent. Items that were answered
  // (a 5xx) don't: the breaker stands down instead (stand_down).
  const auto silent = [](const waiting_item& w) { return w.o.http_status == 0; };
  if (auto p = take_waiting([&](const waiting_item& x) { return silent(x) && !breaker_.was_probed(x.j.id); })) return p;
  return take_waiting(silent);
}

bool shard::stand_down() {
  // Nothing new left to ask the API with, and every item waiting was answered (a 5xx): those
  // answers can't be told from the items' own (a 500 for every IPv6 address, say). The circuit
  // closes without an answer, and they run again as ordinary retries: each had its free answer,
  // so the next spends its attempt, and a run whose last items all get a 500 ends with them
  // failed. (Asking the API again with a request it answered already would tell, at the price of
  // a call that buys nothing.)
  if (!probe_claim_empty_ || std::any_of(ready_.begin(), ready_.end(), fresh_item) ||
      std::any_of(waiting_.begin(), waiting_.end(),
                  [&](const waiting_item& w) { return w.o.http_status == 0 || may_probe(w.j); }))
    return false;
  if (!breaker_.stand_down()) return false;
  bump(ctx_.figures.circuit_open, -1);
  probe_claim_empty_ = false;
  if (waiting_.empty())
    log::warn("shard ", index_, ": nothing new left to ask the API with: sending resumes, each item's answered 5xx "
              "spending its attempt");
  else
    log::warn("shard ", index_, ": nothing new left to ask the API with, and the ", waiting_.size(),
              " item(s) waiting were all answered 5xx: they run again as ordinary retries, each answer now spending "
              "its attempt");
  for (auto& w : waiting_) {
    if (auto* h = held_.find(w.j.id)) h->excused = true;
    rerun_.push_back(std::move(w.j));
    bump(ctx_.figures.waiting_for_api, -1);
  }
  waiting_.clear();
  publish();
  wake_.notify();
  return true;
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
