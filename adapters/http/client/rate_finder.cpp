#include <dibs/http/rate_finder.hpp>

#include <algorithm>

namespace dibs::http {

rate_finder::rate_finder(pace_settings s, clock::time_point now) : s_(s), window_start_(now), grown_at_(now) {}

void rate_finder::counted(std::uint64_t sent, std::uint64_t waited, clock::time_point now) {
  sent_ = sent;
  waited_ = waited;
  if (now - window_start_ < s_.window) return;
  if (now - window_start_ >= 2 * s_.window) {
    // Nothing was answered for a while (a pause, an outage, an idle source): a window spanning it
    // would measure the pause, and a refusal right after would pace at that. Start afresh.
    window_start_ = now;
    window_base_ = sent;
    window_through_base_ = through_total_;
    previous_sends_ = 0;
    previous_length_ = clock::duration::zero();
    return;
  }
  const double seconds = std::chrono::duration<double>(now - window_start_).count();
  best_through_per_s_ = std::max(best_through_per_s_, static_cast<double>(through_total_ - window_through_base_) / seconds);
  window_through_base_ = through_total_;
  previous_sends_ = sent - window_base_;
  previous_length_ = now - window_start_;
  window_start_ = now;
  window_base_ = sent;
}

double rate_finder::sent_per_second(clock::time_point now) const {
  const auto n = previous_sends_ + (sent_ - window_base_);
  // At least 10 ms: the first refusal can come a few milliseconds into a run.
  const auto length = std::max<clock::duration>(previous_length_ + (now - window_start_), std::chrono::milliseconds(10));
  return static_cast<double>(n) / std::chrono::duration<double>(length).count();
}

double rate_finder::floor() const { return std::max(s_.min_per_s, best_through_per_s_ * s_.floor_of_best); }

void rate_finder::set_rate(double r) {
  const bool first = rate_ == 0;
  rate_ = std::max(r, floor());
  lowest_ = first ? rate_ : std::min(lowest_, rate_);
  highest_ = first ? rate_ : std::max(highest_, rate_);
}

bool rate_finder::answered(bool refused, clock::time_point sent_at, clock::time_point now) {
  if (!refused) {
    ++got_through_;
    ++through_total_;
    if (rate_ > 0 && waited_ > waited_seen_) {
      const double seconds = std::min(std::chrono::duration<double>(now - grown_at_).count(), 1.0);
      // Far under where the last refusal came, back up fast: that was all the API refused.
      const double growth = rate_ < s_.recover_below * refused_at_ ? s_.recover_per_s : s_.growth_per_s;
      set_rate(rate_ * (1 + growth * std::max(seconds, 0.0)));
    }
    waited_seen_ = waited_;
    grown_at_ = now;
    return false;
  }
  // A refusal of a request sent before the pace last went down says nothing of the pace now.
  if (rate_ > 0 && sent_at < decreased_at_) return false;
  // Nothing got through since the last decrease (or ever): the API is down, not limiting its
  // rate. Its refusals count in the share only right after a decrease, where they say the pace
  // is still far too fast; not later (after an outage of 30 s, one answer and one refusal would
  // read as nearly all refused).
  if (got_through_ == 0) {
    if (decreases_ > 0 && now - decreased_at_ < 2 * s_.window) ++refused_;
    return false;
  }
  ++refused_;
  // The share that got through: sending 5 times the API's rate, 4 in 5 are refused, and the pace
  // goes to half at once rather than 0.85 five times over, each a round of refusals. Not from
  // one refusal: one refused beside one through is no share (measured: the pace fell from 327/s
  // to 139/s against an API allowing 300, and took 8 s to climb back).
  const double through = refused_ < 2 ? 1.0 : static_cast<double>(got_through_) / static_cast<double>(got_through_ + refused_);
  // What requests went at: the pace, or what was measured when that was less; right after the
  // windows started afresh too little was measured, and the pace alone is taken.
  const bool measured = previous_length_ + (now - window_start_) >= s_.window;
  const double sent = sent_per_second(now);
  refused_at_ = rate_ <= 0 ? sent : measured ? std::min(rate_, sent) : rate_;
  set_rate(refused_at_ * s_.decrease * std::clamp(through, s_.deepest_share, 1.0));
  decreased_at_ = now;
  got_through_ = refused_ = 0;
  ++decreases_;
  waited_seen_ = waited_;
  grown_at_ = now;
  return true;
}

}  // namespace dibs::http
