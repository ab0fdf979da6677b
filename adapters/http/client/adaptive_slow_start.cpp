// Slow start of the adaptive limit (adaptive_limit.hpp): its round trips, judged by the answers
// to requests sent since each began; the first one's burst order; the end on a queue, a full
// pipe or the ceiling; and the steps where a kept-alive connection costs more than its requests.
// Part of adaptive_limit (pure: the caller passes the time).
#include <dibs/http/adaptive_limit.hpp>

#include "burst_order.hpp"
#include "straggler_watch.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dibs::http {

bool adaptive_limit::slow_start_round(std::chrono::microseconds latency, clock::time_point now, bool straggler) {
  // A round trip is judged by the answers to requests sent since it began, at the limit it
  // tries: answers to earlier requests speak of the limit before (against a server that queues,
  // the first requests sent at a limit eight times higher are answered as fast as before, and
  // the rest wait behind them).
  if (now - latency < round_start_) return false;
  if (!straggler) {
    round_us_.push_back(static_cast<std::uint32_t>(std::clamp<std::int64_t>(latency.count(), 1, UINT32_MAX)));
    if (round_history_.empty())
      first_round_.emplace_back(std::chrono::duration_cast<std::chrono::microseconds>((now - latency).time_since_epoch()).count(),
                                round_us_.back());
  }
  if (loss_ != limit_signal::none) return false;  // a loss is heard first (maybe_decide), never grown past
  if (round_us_.size() < std::min<std::size_t>(round_samples, limit())) return false;  // a few answers to judge by
  const bool judged = round_us_.size() >= std::min(round_samples, static_cast<std::size_t>(s_.max));
  const double q = lower_quartile(round_us_);
  const auto median = round_us_.begin() + static_cast<std::ptrdiff_t>(round_us_.size() / 2);
  std::nth_element(round_us_.begin(), median, round_us_.end());
  const auto round_trip = std::chrono::microseconds(*median);
  round_us_.clear();
  const bool limited = round_limited_;
  round_limited_ = false;
  round_start_ = now;
  step_pending_ = false;  // this round trip says again whether a step may be taken
  // The usual latency is the median of the round trips so far: queueing slows every answer, so
  // the rounds past the server's capacity stand out. A round trip of a handful of answers can
  // hold the limit where it is, never end slow start: the lower quartile of a few answers from an
  // API whose latency spreads (10-90 ms) strays by half.
  // The first round trip has no usual one to be judged against: a server that answers the burst
  // in the order it was sent, each answer a service time after the last, queues it.
  if (round_history_.empty()) {
    std::vector<burst_answer> burst;
    for (const auto& [sent, us] : first_round_) burst.push_back({sent, us});
    first_round_.clear();
    if (const auto factor = queued_in_send_order(std::move(burst)); factor && judged) {
      end_slow_start(*factor, now);
      return true;
    }
  }
  const double usual = usual_round_us(q);
  const bool slow = q > usual + std::max({s_.spike_floor * usual, static_cast<double>(s_.spike_min.count()), 2 * client_delay_us_});
  if (!slow) remember_round(q, judged);
  if (!judged) {
    if (limited && !slow) step_or_wait(round_trip, now);
    return true;
  }
  if (slow) {
    // Slower than usual: the server queues (the limit passed its capacity), or this round trip
    // met a clump of slow items or a busy machine; the next one tells.
    // Down by the ratio (the in-flight the server serves without queueing, by Little's law), as
    // deep as the last round trip grew it: past a small server's capacity a round trip at x8 can
    // be a hundred times its usual latency.
    if (slow_round_) end_slow_start(std::clamp(usual / q, 1 / s_.start_growth, 0.9), now);
    slow_round_ = !slow_round_;
    return true;
  }
  slow_round_ = false;
  // More at the server brought no more answers: held where they were most (full_pipe.hpp), no
  // lower than before the last growth, which a round trip of its own judged (the latency held, and
  // the limit was met). Against Python's http.server with a slow tail (3% of keys answered after
  // 2 s) the pipe read full at 9 after 16 -> 128: each slow answer holds its permit until it turns
  // straggler, and at 4-9 the slow ones held most of them (one run in three took 10-16 s, not 5).
  if (const auto full = pipe_.round_ended(now, round_trip)) {
    const double before = limit_;
    set_limit(std::min(limit_, std::max(std::ceil(*full), std::ceil(limit_ / s_.start_growth))));
    if (limit_ < before) last_decrease_at_ = now;  // a cut: drops of connections opened before it are old news
    end_slow_start(1, now);
    return true;
  }
  // At the ceiling, and a round trip there judged it no slower: nothing more to find.
  if (limit_ >= s_.max) end_slow_start(1, now);
  else if (limited && !costly_steps(round_trip)) step_or_wait(round_trip, now);
  else if (limited && pipe_.best_above(limit_ * 3 / 4))
    // Where a kept-alive connection costs more than two round trips to open (a TLS handshake of
    // 50 ms against answers in 2 ms), a step's new connections are a cost of their own, paid by
    // both sides and for many round trips, while the round trips of the connections already open
    // judge it: 16 -> 128 -> 1,000 in 80 ms, a thousand handshakes, the server's backlog
    // overflowed, 0.3 of a fixed 32. Each step waits until the answers a second show the last
    // one brought more (the best of the pipe's samples came with over three quarters of the limit
    // at the server: its connections are open; over half, a sample of the level before passed,
    // and the next step came 8 ms after the last), and doubles, as BBR's startup: the pipe then
    // fills within a step of where more stopped paying.
    step_up(costly_growth, now);
  else if (limited && now - stepped_at_ > std::chrono::microseconds(static_cast<std::int64_t>(2 * open_us_)) &&
           pipe_.samples() >= samples_at_step_ + 3)
    // ... but not for ever: the step's connections had twice their usual time to open and the
    // pipe three samples since, and neither more answers nor a full pipe came of it (the calls
    // at the server stay under three quarters of the limit: connections closed now and then, a
    // server whose capacity lies between the two steps): slow start ends here, hill climbing
    // takes over.
    end_slow_start(1, now);
  return true;
}

bool adaptive_limit::connections_unserved(clock::time_point now) {
  if (phase_ != phase::slow_start) return false;  // hill climbing judges probes by their answers
  end_slow_start(1, now);
  return true;
}

void adaptive_limit::connection_opened(std::chrono::microseconds took) {
  const double us = static_cast<double>(took.count());
  open_us_ = open_us_ <= 0 ? us : 0.75 * open_us_ + 0.25 * us;
}

void adaptive_limit::step_up(double factor, clock::time_point now) {
  set_limit(limit_ * factor);
  stepped_at_ = now;
  samples_at_step_ = pipe_.samples();
  count_connections_from(now);
}

void adaptive_limit::step_or_wait(std::chrono::microseconds round_trip, clock::time_point now) {
  if (!step_waits()) return step_up(s_.start_growth, now);
  step_pending_ = true;  // taken by the answer that brings the step's connections to three quarters
  if (waiting_since_ == clock::time_point{}) {
    waiting_since_ = now;
  } else if (now - waiting_since_ >= straggler_after(round_trip)) {
    // Waited a round trip's straggler lateness (since the first round trip that would have
    // stepped, slow ones between counted), and the step's new connections are still short: their
    // first requests failed, or sit in a queue the straggler watch did not judge. Slow start
    // ends where it stands.
    end_slow_start(1, now);
  }
}

void adaptive_limit::count_connections_from(clock::time_point from) {
  counting_from_ = from;
  step_sent_ = step_answered_ = 0;
  step_pending_ = false;
  waiting_since_ = {};
}

void adaptive_limit::new_connection_sent(clock::time_point opened_at) {
  if (phase_ == phase::slow_start && opened_at >= counting_from_) ++step_sent_;
}

void adaptive_limit::new_connection_unsent(clock::time_point opened_at) {
  if (phase_ == phase::slow_start && opened_at >= counting_from_ && step_sent_ > 0) --step_sent_;
}

void adaptive_limit::new_connection_answered(clock::time_point opened_at) {
  if (phase_ == phase::slow_start && opened_at >= counting_from_) ++step_answered_;
}

bool adaptive_limit::take_waiting_step(clock::time_point now) {
  if (phase_ != phase::slow_start || !step_pending_ || loss_ != limit_signal::none || step_waits()) return false;
  step_up(s_.start_growth, now);
  // The next round trip begins with the step, as one judged in slow_start_round's does.
  round_us_.clear();
  round_limited_ = false;
  round_start_ = now;
  return true;
}

bool adaptive_limit::step_waits() const {
  if (!keeps_connections()) return false;  // every call opens its connection
  return step_sent_ >= 4 && 4 * step_answered_ < 3 * step_sent_;
}

bool adaptive_limit::costly_steps(std::chrono::microseconds round_trip) const {
  // Where connections are not kept (half the answers or more closed theirs: HTTP/1.0,
  // `Connection: close`), every call pays its connection whatever the limit, and a step opens
  // no more than its calls: nearly every permit is opening one at any time over a slow
  // handshake, and no sample could show the requests at the server at half the limit. (Counted
  // by the answers, not the connections opened: a step's new connections outnumber the answers
  // a while.)
  if (!keeps_connections()) return false;
  return open_us_ > costly_open * static_cast<double>(round_trip.count());
}

double adaptive_limit::usual_round_us(double q) const {
  // The (lower) median of the usual round trips before this one; this one when it is the first.
  if (round_history_.empty()) return q;
  std::vector<double> sorted(round_history_.begin(), round_history_.end());
  const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>((sorted.size() - 1) / 2);
  std::nth_element(sorted.begin(), mid, sorted.end());
  return *mid;
}

void adaptive_limit::remember_round(double q, bool judged) {
  // Only round trips that were not slow are usual. One of a few answers joins them only while
  // there is nothing better: the first of enough answers replaces them.
  if (judged && !judged_history_) {
    round_history_.clear();
    judged_history_ = true;
  }
  if (!judged && judged_history_) return;
  if (round_history_.size() >= 16) round_history_.erase(round_history_.begin());
  round_history_.push_back(q);
}

void adaptive_limit::end_slow_start(double factor, clock::time_point now) {
  count_connections_from(clock::time_point::max());  // nothing to count until slow start again
  round_us_.clear();
  first_round_.clear();
  slow_round_ = false;
  // The moving average of the round trips starts afresh: during the ramp each window held the
  // first answers of a burst, the fastest (against an API answering in 10-90 ms: 12 ms), and the
  // usual 30 ms at the ceiling then read as a spike that halved the limit. The windows right
  // after the ramp hold its last burst's answers too ...
  average_us_ = deviation_us_ = suspect_us_ = 0;
  // ... once the ramp's last burst has been answered: the answers of a burst come over as long
  // as the slowest of them takes, twice the slowest seen (2 s at most).
  settle_until_ = now + std::chrono::microseconds(static_cast<std::int64_t>(std::min(2 * ramp_max_us_, 2e6)));
  if (factor < 1) return decrease(factor, limit_signal::latency, now);
  phase_ = phase::hold;
  periods_held_ = 0;
  best_rate_ = 0;
  hold_for_ = s_.hold_periods;
  start_period(now);
}

}  // namespace dibs::http
