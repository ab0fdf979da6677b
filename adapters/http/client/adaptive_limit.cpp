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
      round_start_(now),
      pipe_(now),
      period_start_(now),
      measure_from_(now),
      lowest_(limit_),
      highest_(limit_) {
  hold_for_ = s.hold_periods;
  samples_us_.reserve(64);
}

void adaptive_limit::started(std::size_t in_flight, std::size_t waiting, std::size_t opening) {
  ++period_starts_;
  if (phase_ == phase::slow_start) pipe_.started(in_flight - std::min(opening, in_flight), in_flight);
  // (Calls opening a connection are demand as any: where every call opens one, some always are.
  // Where opening costs more than two round trips, slow start's steps wait for the answers.)
  if (waiting > 0 || static_cast<double>(in_flight) >= std::floor(limit_)) {
    ++period_limited_;
    round_limited_ = true;
  }
}

// The lower quartile of `us` (reordered): queueing at the server delays every answer, the
// fastest too; slow items (a slow tail sent together in a burst) are most of a round trip's
// answers at times, never a quarter of them for long.
double adaptive_limit::lower_quartile(std::vector<std::uint32_t>& us) {
  auto q = us.begin() + static_cast<std::ptrdiff_t>(us.size() / 4);
  std::nth_element(us.begin(), q, us.end());
  return *q;
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
    if (phase_ == phase::slow_start) ramp_max_us_ = std::max(ramp_max_us_, static_cast<double>(us));
  }
  if (now >= measure_from_) ++period_answers_;  // the period's first round trip answers the old limit
  ++answered_;
  if (phase_ == phase::slow_start) pipe_.answered();
  ++window_answers_;
  const bool stepped = take_waiting_step(now);
  const bool round = phase_ == phase::slow_start && slow_start_round(latency, now, straggler);
  const bool decided = maybe_decide(now);
  return maybe_measure(now) || decided || round || stepped;
}

bool adaptive_limit::refused(limit_signal why, clock::time_point now, bool paused) {
  ++window_refused_;
  if (paused) paused_loss_ = true;
  return overloaded(why, now);
}

void adaptive_limit::hold_probes(clock::time_point now, clock::duration hold) {
  const bool again = probe_hold_ > clock::duration::zero() && now < held_at_ + 2 * probe_hold_;
  if (!again) hold_doublings_ = 0;
  else if (now >= held_at_ + probe_hold_ / 4) hold_doublings_ = std::min(hold_doublings_ + 1, max_hold_doublings);
  // (Refusals within the first quarter of a hold are of the same burst or pause, not a probe's.)
  held_at_ = now;
  probe_hold_ = hold * (1 << hold_doublings_);
  ramp_top_ = 0;
  climbs_ = false;
}

bool adaptive_limit::probe_held(double up, clock::time_point now) const {
  if (probe_hold_ <= clock::duration::zero()) return false;
  const double step = up / limit_ - 1;
  const double share = step > s_.probe_step ? s_.probe_step / step : 1.0;
  return now < held_at_ + std::chrono::duration_cast<clock::duration>(probe_hold_ * share);
}

bool adaptive_limit::overloaded(limit_signal why, clock::time_point now, clock::time_point since) {
  if (why == limit_signal::dropped_handshake && since != clock::time_point{} && since < last_decrease_at_) return false;
  // The first burst's new connections overflowing a small listen backlog (Python's 5) say the
  // server accepts slowly, not that it serves fewer at once: before slow start has judged a round,
  // the client's pace of new connections alone slows for it (client::handshake_dropped). Cut for
  // it, slow start ended at its first round (16 -> 11) and a run of 200 batch requests climbed
  // by steps: 2 s where 0.75 s was the rule, in a third of the runs. Later drops lower the limit as
  // before (without that, hundreds of connects a round kept being dropped).
  if (why == limit_signal::dropped_handshake && phase_ == phase::slow_start && round_history_.empty()) return false;
  // A refusal or a call lost ends any climb when heard, whether or not it is the one a decrease
  // names (the first of a round trip's losses, none in the round trip after a decrease).
  if (!nothing_sent_lost(why)) climbs_ = false;
  if (loss_ == limit_signal::none) loss_ = why;
  return maybe_decide(now);
}

void adaptive_limit::set_max(double max) {
  const bool pinned = limit_ >= s_.max;  // the old ceiling held it back: find the new one's fast
  ramp_top_ = 0;  // what slow start found was under another ceiling
  climb_ = 0;
  climbing_ = false;  // (a probe under way is clipped: not judged as one that climbs)
  s_.max = std::max(1.0, max);
  set_limit(limit_);
  if (pinned && s_.max > limit_) {
    phase_ = phase::slow_start;
    pipe_.restart();
    base_rate_ = 0;
    round_us_.clear();
    first_round_.clear();
    slow_round_ = false;
    // Connections are counted again from the next step (set_max is told no time): those opened
    // before it belong to no step of this slow start.
    count_connections_from(clock::time_point::max());
  }
  hold_for_ = s_.hold_periods;
  restart_period_ = true;  // what was measured so far was at another limit
}

void adaptive_limit::set_limit(double l) {
  limit_ = std::clamp(l, std::max(1.0, s_.min), std::max(1.0, s_.max));
  lowest_ = std::min(lowest_, std::floor(limit_));
  highest_ = std::max(highest_, std::floor(limit_));
}

double adaptive_limit::period_latency_us() const {
  // Only while the latency's own swings from one held period to the next are small beside what a
  // probe does to it (a quarter of its step): else it can tell nothing, and the answers per
  // second judge alone (a machine whose speed swings by a third every tenth of a second made
  // probes up look free, and walked the limit up a plateau it should walk down).
  if (period_windows_ == 0 || probe_from_us_ <= 0 || latency_noise_ > s_.probe_step / 4) return -1;
  return period_latency_us_ / period_windows_;
}

bool adaptive_limit::latency_fell() const {
  // Fewer in flight is kinder only to a server that queued them: its answers come sooner. Against
  // a client whose own CPU is the bottleneck the latency stays (the server's), and a probe down
  // loses answers that one period's noise may hide.
  const double latency = period_latency_us();
  return latency < 0 || latency <= probe_from_us_ * (1 - s_.probe_step / 4);
}

bool adaptive_limit::latency_held() const {
  // By Little's law, while the latency holds, more in flight is more answers, whatever a noisy
  // machine does to the answers per second of one period (a shared 2-core machine: a third up or
  // down). Probes up judged by those alone found nothing on a busy machine, and a client held at
  // 127-158 calls against an API that answers 1,000 at once in 20 ms stayed there.
  const double latency = period_latency_us();
  if (latency < 0) return false;
  // A server that queues answers later in proportion to the calls in flight: a probe a quarter up
  // is a quarter later, and no answer more. Latency up by less than the probe's own step (limits
  // are whole: 6 -> 7 is a sixth) is more answers, by Little's law: kept where that is
  // `drop_tolerance` (3%) or more, as much as a probe down may lose and be kept, so that no limit
  // is kept both ways (or where the latency rose by no more than the client's own lateness,
  // twice, and half a millisecond: a busy machine's scheduler). Asked 11% (the latency up by half
  // the step, the rule before), a server whose latency grows with its load (5 ms + 2 ms a call in
  // flight) held the limit near 10, 0.70-0.73 of a fixed 256 (bench/results/adaptive-third-pass.md).
  // Noise may pass a probe up a plateau now and then: the latency judges only while its periods
  // stray by less than a quarter of the step (period_latency_us), the probe's next periods must
  // confirm it, and probes down walk a plateau back down.
  if (latency <= probe_from_us_ + std::max(500.0, 2 * client_delay_us_)) return true;
  const double step = base_limit_ > 0 ? limit_ / base_limit_ : 1 + s_.probe_step;
  return step * probe_from_us_ / latency >= 1 + s_.drop_tolerance;
}

void adaptive_limit::start_period(clock::time_point now) {
  period_start_ = now;
  period_latency_us_ = 0;
  period_windows_ = 0;
  measure_from_ = now + std::chrono::microseconds(static_cast<std::int64_t>(average_us_));
  period_answers_ = 0;
  period_starts_ = 0;
  period_limited_ = 0;
}

void adaptive_limit::decrease(double factor, limit_signal why, clock::time_point now) {
  const double before = limit_;
  // Slow start cut by a queue's rule (the latency's ratio) or by connections the server never took
  // (dropped or refused: no request reached it): the server's best may lie anywhere between here
  // and where slow start stopped (see ramp_top_). Any other loss, then or later, ends the way
  // back: a refusal (429, 502-504) says how many the API takes, and a timeout or a reset may be a
  // call it billed, retried; no way back up is worth more of them.
  // (A decrease for a refusal or a lost call ended any climb already, when overloaded() heard it.)
  if (!nothing_sent_lost(why)) ramp_top_ = 0;
  else if (phase_ == phase::slow_start) ramp_top_ = before;
  set_limit(std::floor(limit_ * factor + 1e-9));
  last_decrease_at_ = now;
  // A probe up that ends in a decrease found nothing better: probe less often. Any other decrease
  // is news of the server: probe again soon.
  if (probing_up()) {
    ramp_top_ = 0;
    probe_found_nothing();
  } else {
    hold_for_ = s_.hold_periods;
  }
  phase_ = phase::hold;
  climb_ = 0;
  periods_held_ = 0;
  best_rate_ = 0;  // not measured at this limit yet
  prefer_down_ = why == limit_signal::latency;  // the server queued: below may do as well
  last_decrease_ = why;
  cooling_ = true;
  if (limit_ < before) ++decreases_;
  start_period(now);
}

bool adaptive_limit::maybe_decide(clock::time_point now) {
  const auto window = std::max<std::chrono::microseconds>(
      s_.min_window, std::chrono::microseconds(static_cast<std::int64_t>(average_us_)));
  // A loss is acted on once a round trip, its own (1 ms at least), not the window's 5 ms: against
  // an API answering in 0.4 ms that refuses past its rate, the refusals of a window were a dozen
  // round trips'. In slow start, at once: the limit grew eightfold a round trip ago.
  const auto round_trip = std::max<std::chrono::microseconds>(std::chrono::milliseconds(1), typical_latency());
  const bool loss_due = loss_ != limit_signal::none && (phase_ == phase::slow_start || now - window_start_ >= round_trip);
  if (now - window_start_ < window && !loss_due) return false;
  // A quartile needs a few answers: at a limit of 1 or 2, one slow item's answer alone would be the
  // round trip's latency, the moving average would jump to it, and every later round trip and
  // measuring period would last that long. Loss needs no answers to be heard.
  if (samples_us_.size() < s_.min_samples && loss_ == limit_signal::none) return false;

  const auto loss = loss_;
  const bool paused = paused_loss_;
  paused_loss_ = false;
  const bool cooling = cooling_;
  // Refused, what got through: the share the API took.
  const double through = window_refused_ ? static_cast<double>(window_answers_) / static_cast<double>(window_answers_ + window_refused_) : 1;
  window_start_ = now;
  loss_ = limit_signal::none;
  cooling_ = false;
  window_answers_ = window_refused_ = 0;

  double latency = 0;
  if (samples_us_.size() >= s_.min_samples) {  // (a round trip ended early by a loss may have fewer)
    latency = lower_quartile(samples_us_);
    samples_us_.clear();
    recent_ = std::chrono::microseconds(static_cast<std::int64_t>(latency));
    if (now >= measure_from_) {  // the period's own round trips (the first still answers the old limit)
      period_latency_us_ += latency;
      ++period_windows_;
    }
  }
  // A probe of the way back (up to x2, where a spike is half again) may be that much later without
  // queueing anything: the period judges it (latency_held), by Little's law, where a spike would
  // take it back before a period could. Probes a quarter up keep the spike rule as it was.
  const double probe_rise = long_probe() ? (limit_ / base_limit_ - 1) * average_us_ : 0;
  bool spike = latency > 0 && average_us_ > 0 &&
                     latency > average_us_ + std::max({s_.deviation_scale * deviation_us_, s_.spike_floor * average_us_,
                                                       static_cast<double>(s_.spike_min.count()), 2 * client_delay_us_, probe_rise});
  // A spike is queueing only when the next round trip is slow too: one slow round trip alone is
  // as often a clump of slow items sent together, or the client's own machine busy for a moment,
  // and it is not folded into the average either (it would stretch every later round trip).
  const double suspect = suspect_us_;
  suspect_us_ = 0;
  // The round trip after a decrease hears of requests sent before it: they judge the old limit.
  // Slow start judges latency by its own round trips (slow_start_round): only loss here.
  if (phase_ == phase::slow_start) spike = false;
  const bool settling = now < settle_until_;
  if (settling) spike = false;
  if (!cooling) {
    if (loss != limit_signal::none) {
      // A loss at a long probe (up to twice the limit) comes back no higher than where it started,
      // which had none (x0.7 of twice is 1.4 times it); refused, to the share that got through.
      double factor = through < 1 ? std::clamp(through, 0.2, 0.9) : s_.loss_decrease;
      if (through >= 1 && long_probe()) factor = std::min(factor, base_limit_ / limit_);
      // Refused with a pause of every call: by half at least, a probe up back to where it started.
      if (paused) {
        factor = std::min(factor, paused_decrease);
        if (probing_up() && base_limit_ > 0) factor = std::max(factor, base_limit_ / limit_);
      }
      decrease(factor, loss, now);
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
  if (settling) return true;  // no baseline yet (see end_slow_start)
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
  if (ramp_top_ <= quarter_up(limit_)) ramp_top_ = 0;  // (no further than a probe's own step: the way back is done)
  double up = next_up();

  switch (phase_) {
    case phase::slow_start:
      break;  // judged by round trips (slow_start_round)
    case phase::hold:
      if (best_rate_ > 0) noise_ += s_.ewma_alpha * (std::abs(rate - best_rate_) / best_rate_ - noise_);
      if (period_windows_ > 0) {  // ... and how far the latency of periods at one limit strays
        const double latency = period_latency_us_ / period_windows_;
        if (held_latency_us_ > 0) latency_noise_ += s_.ewma_alpha * (std::abs(latency - held_latency_us_) / held_latency_us_ - latency_noise_);
        held_latency_us_ = latency;
      }
      best_rate_ = best_rate_ == 0 ? rate : (best_rate_ + rate) / 2;
      if (++periods_held_ >= hold_for_ && limited) {
        base_limit_ = limit_;
        base_rate_ = best_rate_;
        // Down again after a probe down that was kept, or after the server queued: a plateau is
        // walked down one probe at a time, not one up and one down (from 6 to 1 against an API
        // fastest one at a time took 7 s, 0.83 of its speed).
        const double down = std::min(limit_ - 1, std::ceil(limit_ * (1 - s_.probe_step)));
        if (prefer_down_ && down >= std::max(1.0, s_.min)) {
          probe_from_us_ = average_us_;
          climb_ = 0;
          set_limit(down);
          phase_ = phase::probe_down;
        } else if (up > limit_ && !probe_held(up, now)) {
          start_probe_up(up);
        }
      }
      break;
    case phase::probe_up:
      if (limited && (climbing_ ? scaled(rate) : rate > base_rate_ * (1 + gain_needed()) || latency_held())) {
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
      // A long probe is confirmed by one period: the way back's goes no further than where slow
      // start stood without a loss, and the latency judged it too (latency_held); a climbing
      // one's answers rose with its calls (scaled). Two periods a step held a server whose
      // latency grows with its load at a third of its answers for a second after slow start's
      // cut (3 -> 6 -> 9 -> 12, 0.4 s a step).
      if (++periods_held_ < (long_probe() ? 1 : s_.hold_periods)) break;
      if (climbing_ ? scaled(confirm_rate_ / periods_held_)
                    : confirm_rate_ / periods_held_ > base_rate_ * (1 + gain_needed()) || latency_held()) {
        // Worth it: held here, and higher tried next; further, where the answers rose with the
        // calls (the server did not queue them: it scales), as far again as the probe went.
        climb_ = scaled(confirm_rate_ / periods_held_) ? std::min(climb_ + 1, max_climb) : 0;
        hold_for_ = s_.hold_periods;
        base_limit_ = limit_;
        base_rate_ = confirm_rate_ / periods_held_;
        best_rate_ = base_rate_;
        up = next_up();
        if (up > limit_ && !probe_held(up, now)) {
          start_probe_up(up);
        } else {
          phase_ = phase::hold;
          periods_held_ = 0;
        }
      } else {
        after_failed_probe_up();
      }
      break;
    case phase::probe_down:
      if (rate >= base_rate_ * (1 - s_.drop_tolerance) && latency_fell()) {
        // As many answers with fewer in flight, perhaps by chance: as a probe up, the next periods
        // confirm it. Kept on one period's say, probes down walked a client whose own CPU was the
        // bottleneck (the machine busy beside it, periods straying by a third) from 1,000 calls
        // in flight to 124, a quarter of its answers.
        phase_ = phase::confirm_down;
        periods_held_ = 0;
        confirm_rate_ = 0;
        break;
      }
      after_failed_probe_down();
      break;
    case phase::confirm_down:
      confirm_rate_ += rate;
      if (++periods_held_ < s_.hold_periods) break;
      if (confirm_rate_ / periods_held_ >= base_rate_ * (1 - s_.drop_tolerance) && latency_fell()) {
        best_rate_ = confirm_rate_ / periods_held_;  // kept: as many answers with fewer in flight
        hold_for_ = s_.hold_periods;
        prefer_down_ = true;
        phase_ = phase::hold;
        periods_held_ = 0;
      } else {
        after_failed_probe_down();
      }
      break;
  }
  start_period(now);
  return true;
}

double adaptive_limit::next_up() const {
  // (At the ceiling at most: from 801 under 1,000, a quarter up was past it, and never tried.)
  const double up = std::min(quarter_up(limit_), s_.max);
  // Halfway back, at most twice the limit: probes down kept meanwhile may have walked it far below.
  if (ramp_top_ > up) return std::max(up, std::min({std::floor(std::sqrt(limit_ * ramp_top_)), 2 * limit_, s_.max}));
  if (climb_ == 0 || !climbs_) return up;
  const double step = s_.probe_step * static_cast<double>(1 << climb_);
  return std::max(up, std::min({std::floor(limit_ * (1 + step)), 2 * limit_, s_.max}));
}

void adaptive_limit::start_probe_up(double up) {
  probe_from_us_ = average_us_;
  set_limit(up);
  phase_ = phase::probe_up;
  climbing_ = climb_ > 0 && long_probe() && ramp_top_ == 0;
}

bool adaptive_limit::scaled(double rate) const {
  // Three quarters as many more answers as calls at least (1.5 times the calls, 1.375 times the
  // answers), and more than a probe's noise asks: where half of a probe's added calls went
  // unanswered (held by a server past its cap until they time out), twice the limit next would
  // leave a hundred hanging.
  const double more_calls = base_limit_ > 0 ? limit_ / base_limit_ - 1 : 0;
  return more_calls > 0 && rate >= base_rate_ * (1 + std::max(0.75 * more_calls, gain_needed()));
}

void adaptive_limit::after_failed_probe_down() {
  set_limit(base_limit_);  // neither way was better: probe less often
  best_rate_ = base_rate_;
  probe_found_nothing();
  prefer_down_ = false;
  climb_ = 0;
  phase_ = phase::hold;
  periods_held_ = 0;
}

void adaptive_limit::after_failed_probe_up() {
  climb_ = 0;
  ramp_top_ = 0;  // the way back ends at the first probe that found nothing: a quarter at a time after it
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
