#include "adaptive_limit.hpp"

#include <algorithm>
#include <cmath>

namespace dibs::http {

const char* to_string(limit_signal s) {
  switch (s) {
    case limit_signal::none: return "";
    case limit_signal::latency: return "latency rose";
    case limit_signal::throttled: return "429 Too Many Requests";
    case limit_signal::unavailable: return "502/503/504 from the API";
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
      floor_period_start_(now),
      lowest_(limit_),
      highest_(limit_) {
  samples_us_.reserve(64);
}

void adaptive_limit::started(std::size_t in_flight, std::size_t waiting) {
  if (waiting > 0 || static_cast<double>(in_flight) >= std::floor(limit_)) limited_ = true;
  peak_ = std::max(peak_, static_cast<double>(in_flight));
}

bool adaptive_limit::answered(std::chrono::microseconds latency, clock::time_point now) {
  const auto us = static_cast<std::uint32_t>(std::clamp<std::int64_t>(latency.count(), 1, UINT32_MAX));
  samples_us_.push_back(us);
  if (min_latency_.count() == 0 || latency < min_latency_) min_latency_ = std::chrono::microseconds(us);
  return maybe_decide(now);
}

bool adaptive_limit::overloaded(limit_signal why, clock::time_point now) {
  if (loss_ == limit_signal::none) loss_ = why;
  return maybe_decide(now);
}

void adaptive_limit::set_max(double max) {
  s_.max = std::max(1.0, max);
  set_limit(limit_);
}

void adaptive_limit::set_limit(double l) {
  limit_ = std::clamp(l, std::max(1.0, s_.min), std::max(1.0, s_.max));
  lowest_ = std::min(lowest_, std::floor(limit_));
  highest_ = std::max(highest_, std::floor(limit_));
}

void adaptive_limit::decrease(double factor, limit_signal why) {
  const double before = limit_;
  set_limit(std::floor(limit_ * factor));
  slow_start_ = false;
  last_decrease_ = why;
  cooling_ = true;
  if (limit_ < before) ++decreases_;
}

bool adaptive_limit::maybe_decide(clock::time_point now) {
  const auto window = std::max<std::chrono::microseconds>(
      s_.min_window, std::chrono::microseconds(static_cast<std::int64_t>(average_us_)));
  if (now - window_start_ < window) return false;
  if (samples_us_.empty() && loss_ == limit_signal::none) return false;  // nothing learned yet

  const bool limited = limited_;
  const auto loss = loss_;
  const bool cooling = cooling_;
  // The answers of this window were mostly sent in the one before, at its level of demand.
  const double judged = std::max(prior_peak_, 1.0);
  prior_peak_ = peak_;
  peak_ = 0;
  window_start_ = now;
  limited_ = false;
  loss_ = limit_signal::none;
  cooling_ = false;

  double latency = 0;
  if (!samples_us_.empty()) {
    auto mid = samples_us_.begin() + static_cast<std::ptrdiff_t>(samples_us_.size() / 2);
    std::nth_element(samples_us_.begin(), mid, samples_us_.end());
    latency = *mid;
    samples_us_.clear();
    recent_ = std::chrono::microseconds(static_cast<std::int64_t>(latency));
    // The floor: the lowest window of this period and the one before.
    if (now - floor_period_start_ >= s_.floor_memory) {
      floor_period_start_ = now;
      floor_us_ = floor_next_us_;
      floor_next_us_ = 0;
    }
    floor_next_us_ = floor_next_us_ == 0 ? latency : std::min(floor_next_us_, latency);
  }
  const double floor = floor_us_ == 0 ? floor_next_us_ : std::min(floor_us_, floor_next_us_ == 0 ? floor_us_ : floor_next_us_);

  if (loss != limit_signal::none) {
    // The window after a decrease hears of requests sent before it: they judge the old limit.
    if (!cooling) decrease(s_.loss_decrease, loss);
  } else if (latency > 0) {
    if (slow_start_) {
      if (latency > floor * (1 + s_.floor_tolerance)) {
        // Past the knee, which lies between half the judged demand and the demand itself: the
        // limit already doubled once more meanwhile.
        set_limit(std::min(limit_, 0.75 * judged) / s_.latency_decrease);
        decrease(s_.latency_decrease, limit_signal::latency);
      } else if (limited) {
        set_limit(limit_ * 2);
      }
    } else {
      const double allowed = std::max(s_.deviation_scale * deviation_us_, s_.inflation_floor * average_us_);
      if (!cooling && average_us_ > 0 && latency > average_us_ + allowed) {
        // In proportion to the inflation (Gradient's rule), between halving and the usual step.
        decrease(std::clamp(average_us_ / latency, 0.5, s_.latency_decrease), limit_signal::latency);
      } else if (limited && latency <= average_us_ && latency < 2 * floor) {
        set_limit(limit_ + 1);
      }
    }
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

}  // namespace dibs::http
