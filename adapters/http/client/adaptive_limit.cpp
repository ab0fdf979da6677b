#include <dibs/http/adaptive_limit.hpp>

#include <algorithm>
#include <cmath>

namespace dibs::http {

const char* to_string(limit_signal s) {
  switch (s) {
    case limit_signal::none: return "";
    case limit_signal::latency: return "latency rose";
    case limit_signal::throttled: return "429 Too Many Requests";
    case limit_signal::unavailable: return "502/504 from the API's proxy";
    case limit_signal::timeout: return "timed out";
    case limit_signal::reset: return "connection reset";
    case limit_signal::refused: return "connection refused";
    case limit_signal::dropped_handshake: return "connection not accepted (the server's backlog is full)";
  }
  return "";
}

adaptive_limit::adaptive_limit(adaptive_settings s, clock::time_point now)
    : s_(s),
      limit_(std::clamp(s.initial, std::max(1.0, s.min), std::max(1.0, s.max))),
      window_start_(now),
      period_start_(now),
      measure_from_(now),
      lowest_(limit_),
      highest_(limit_) {
  hold_for_ = s.hold_periods;
  samples_us_.reserve(64);
}

void adaptive_limit::started(std::size_t in_flight, std::size_t waiting) {
  ++period_starts_;
  if (waiting > 0 || static_cast<double>(in_flight) >= std::floor(limit_)) ++period_limited_;
}

bool adaptive_limit::answered(std::chrono::microseconds latency, clock::time_point now, bool straggler) {
  // A straggler's latency says nothing of the server's queue: behind a slow tail whose items had
  // every permit beside them, a round trip of nothing but slow answers read as a 2 s spike and
  // halved the limit, which left room for fewer stragglers still (the slow tail's runs went from
  // 440 to 156 docs/s).
  if (!straggler) {
    const auto us = static_cast<std::uint32_t>(std::clamp<std::int64_t>(latency.count(), 1, UINT32_MAX));
    samples_us_.push_back(us);
    if (min_latency_.count() == 0 || latency < min_latency_) min_latency_ = std::chrono::microseconds(us);
  }
  if (now >= measure_from_) ++period_answers_;  // the period's first round trip answers the old limit
  const bool decided = maybe_decide(now);
  return maybe_measure(now) || decided;
}

bool adaptive_limit::overloaded(limit_signal why, clock::time_point now) {
  if (loss_ == limit_signal::none) loss_ = why;
  return maybe_decide(now);
}

void adaptive_limit::set_max(double max) {
  const bool pinned = limit_ >= s_.max;  // the old ceiling held it back: find the new one's fast
  s_.max = std::max(1.0, max);
  set_limit(limit_);
  if (pinned && s_.max > limit_) {
    phase_ = phase::slow_start;
    base_rate_ = 0;
  }
  hold_for_ = s_.hold_periods;
  restart_period_ = true;  // what was measured so far was at another limit
}

void adaptive_limit::set_limit(double l) {
  limit_ = std::clamp(l, std::max(1.0, s_.min), std::max(1.0, s_.max));
  lowest_ = std::min(lowest_, std::floor(limit_));
  highest_ = std::max(highest_, std::floor(limit_));
}

void adaptive_limit::start_period(clock::time_point now) {
  period_start_ = now;
  measure_from_ = now + std::chrono::microseconds(static_cast<std::int64_t>(average_us_));
  period_answers_ = 0;
  period_starts_ = 0;
  period_limited_ = 0;
}

void adaptive_limit::decrease(double factor, limit_signal why, clock::time_point now) {
  const double before = limit_;
  set_limit(std::floor(limit_ * factor + 1e-9));
  // A probe up that ends in a decrease found nothing better: probe less often. Any other decrease
  // is news of the server: probe again soon.
  if (probing_up()) {
    probe_found_nothing();
  } else {
    hold_for_ = s_.hold_periods;
  }
  phase_ = phase::hold;
  periods_held_ = 0;
  best_rate_ = 0;  // not measured at this limit yet
  last_decrease_ = why;
  cooling_ = true;
  if (limit_ < before) ++decreases_;
  start_period(now);
}

bool adaptive_limit::maybe_decide(clock::time_point now) {
  const auto window = std::max<std::chrono::microseconds>(
      s_.min_window, std::chrono::microseconds(static_cast<std::int64_t>(average_us_)));
  if (now - window_start_ < window) return false;
  // A quartile needs a few answers: at a limit of 1 or 2, one slow item's answer alone would be the
  // round trip's latency, the moving average would jump to it, and every later round trip and
  // measuring period would last that long. Loss needs no answers to be heard.
  if (samples_us_.size() < s_.min_samples && loss_ == limit_signal::none) return false;

  const auto loss = loss_;
  const bool cooling = cooling_;
  window_start_ = now;
  loss_ = limit_signal::none;
  cooling_ = false;

  double latency = 0;
  if (!samples_us_.empty()) {
    // The lower quartile: queueing at the server delays every answer, the fastest too; slow
    // items (a slow tail sent together in a burst) are most of a round trip's answers at times,
    // never a quarter of them for long.
    auto q = samples_us_.begin() + static_cast<std::ptrdiff_t>(samples_us_.size() / 4);
    std::nth_element(samples_us_.begin(), q, samples_us_.end());
    latency = *q;
    samples_us_.clear();
    recent_ = std::chrono::microseconds(static_cast<std::int64_t>(latency));
  }
  const bool spike = latency > 0 && average_us_ > 0 &&
                     latency > average_us_ + std::max({s_.deviation_scale * deviation_us_, s_.spike_floor * average_us_,
                                                       static_cast<double>(s_.spike_min.count())});
  // A spike is queueing only when the next round trip is slow too: one slow round trip alone is
  // as often a clump of slow items sent together, or the client's own machine busy for a moment,
  // and it is not folded into the average either (it would stretch every later round trip).
  const double suspect = suspect_us_;
  suspect_us_ = 0;
  // The round trip after a decrease hears of requests sent before it: they judge the old limit.
  if (!cooling) {
    if (loss != limit_signal::none) {
      decrease(s_.loss_decrease, loss, now);
    } else if (spike && suspect > 0) {
      // Queueing: down by the ratio (Gradient's rule), between halving and a tenth; a probe up that
      // made the queue goes back to where it started, no lower (the limit before it queued nothing).
      double factor = std::clamp(average_us_ / std::min(latency, suspect), 0.5, 0.9);
      if (probing_up() && base_limit_ > 0) factor = std::max(factor, base_limit_ / limit_);
      decrease(factor, limit_signal::latency, now);
    } else if (spike) {
      suspect_us_ = latency;
      return true;
    }
  }
  if (suspect > 0 && latency > 0) {  // confirmed (or after a decrease): the average hears of it too
    deviation_us_ += s_.ewma_alpha * (std::abs(suspect - average_us_) - deviation_us_);
    average_us_ += s_.ewma_alpha * (suspect - average_us_);
  }
  if (latency > 0) {
    if (average_us_ == 0) {
      average_us_ = latency;
    } else {
      deviation_us_ += s_.ewma_alpha * (std::abs(latency - average_us_) - deviation_us_);
      average_us_ += s_.ewma_alpha * (latency - average_us_);
    }
  }
  return true;
}

bool adaptive_limit::maybe_measure(clock::time_point now) {
  // At least two round trips, counted after the first (which still answers the old limit).
  const auto least = std::max<std::chrono::microseconds>(
      s_.min_period, std::chrono::microseconds(static_cast<std::int64_t>(2 * average_us_)));
  if (restart_period_) {
    restart_period_ = false;
    start_period(now);
    return false;
  }
  if (now < measure_from_) return false;
  const auto took = now - measure_from_;
  if (took < least || period_answers_ < s_.min_period_answers) return false;
  const double rate = static_cast<double>(period_answers_) / std::chrono::duration<double>(took).count();
  // Demand: requests of the period found the limit reached. Without that, a higher limit would
  // change nothing, and the answers per second say nothing of the server.
  const bool limited = period_limited_ > 0;
  const double up = std::max(limit_ + 1, std::floor(limit_ * (1 + s_.probe_step)));

  switch (phase_) {
    case phase::slow_start:
      if (!limited) break;
      if (base_rate_ == 0 || rate > base_rate_ * (1 + s_.start_gain)) {
        base_rate_ = rate;
        base_limit_ = limit_;
        set_limit(limit_ * 2);
        if (limit_ > base_limit_) break;  // doubled: measured there next
        best_rate_ = rate;                // at the ceiling
      } else {
        set_limit(base_limit_);  // the doubling was not worth it: the limit before it
        best_rate_ = base_rate_;
      }
      phase_ = phase::hold;
      periods_held_ = 0;
      break;
    case phase::hold:
      if (best_rate_ > 0) noise_ += s_.ewma_alpha * (std::abs(rate - best_rate_) / best_rate_ - noise_);
      best_rate_ = best_rate_ == 0 ? rate : (best_rate_ + rate) / 2;
      if (++periods_held_ >= hold_for_ && limited && up <= s_.max) {
        base_limit_ = limit_;
        base_rate_ = best_rate_;
        set_limit(up);
        phase_ = phase::probe_up;
      }
      break;
    case phase::probe_up:
      if (limited && rate > base_rate_ * (1 + gain_needed())) {
        // Better, perhaps by chance: on a 2-core machine shared with the server a period's answers
        // per second swing by a third, and across a plateau (Python's http.server: the same from 2
        // to 32 in flight) probes kept by chance walked the limit up and down it for the whole
        // run. The next periods at this limit confirm it.
        phase_ = phase::confirm_up;
        periods_held_ = 0;
        confirm_rate_ = 0;
      } else {
        after_failed_probe_up();
      }
      break;
    case phase::confirm_up:
      confirm_rate_ += rate;
      if (++periods_held_ < s_.hold_periods) break;
      if (confirm_rate_ / periods_held_ > base_rate_ * (1 + gain_needed())) {
        // Worth it: held here, and higher tried next.
        hold_for_ = s_.hold_periods;
        base_limit_ = limit_;
        base_rate_ = confirm_rate_ / periods_held_;
        best_rate_ = base_rate_;
        if (up <= s_.max) {
          set_limit(up);
          phase_ = phase::probe_up;
        } else {
          phase_ = phase::hold;
          periods_held_ = 0;
        }
      } else {
        after_failed_probe_up();
      }
      break;
    case phase::probe_down:
      if (rate >= base_rate_ * (1 - s_.drop_tolerance)) {
        best_rate_ = rate;  // as many answers with fewer in flight: kept
        hold_for_ = s_.hold_periods;
      } else {
        set_limit(base_limit_);  // neither way was better: probe less often
        best_rate_ = base_rate_;
        probe_found_nothing();
      }
      phase_ = phase::hold;
      periods_held_ = 0;
      break;
  }
  start_period(now);
  return true;
}

void adaptive_limit::after_failed_probe_up() {
  // As much lower next, from where the probe started: kept if the answers hold up.
  const double down = std::min(base_limit_ - 1, std::ceil(base_limit_ * (1 - s_.probe_step)));
  set_limit(down);
  phase_ = limit_ < base_limit_ ? phase::probe_down : phase::hold;
  periods_held_ = 0;
  if (phase_ == phase::hold) {  // at the floor: nothing lower to try, the probe found nothing
    best_rate_ = base_rate_;
    probe_found_nothing();
  }
}

}  // namespace dibs::http
