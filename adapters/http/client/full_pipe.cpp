#include <dibs/http/full_pipe.hpp>

namespace dibs::http {

std::optional<double> full_pipe::round_ended(clock::time_point now, std::chrono::microseconds latency) {
  if (start_ == clock::time_point{}) {  // restart()
    *this = full_pipe(now);
    return std::nullopt;
  }
  if (answers_ < least_answers || starts_ == 0 || now - start_ < 2 * latency) return std::nullopt;
  const double rate = static_cast<double>(answers_) / std::chrono::duration<double>(now - start_).count();
  const double running = running_sum_ / static_cast<double>(starts_);
  const double in_flight = in_flight_sum_ / static_cast<double>(starts_);
  start_ = now;
  ++samples_;
  answers_ = starts_ = 0;
  running_sum_ = in_flight_sum_ = 0;
  top_rate_ = std::max(top_rate_, rate);
  if (since_best_.empty() || rate >= since_best_.front().rate * rate_gain) {
    stalls_ = 0;
    since_best_.assign(1, sample{rate, running, in_flight});
    return std::nullopt;
  }
  // No more in flight than the best sample had: this sample tells nothing of more.
  const double best_running = since_best_.front().running;
  since_best_.push_back(sample{rate, running, in_flight});
  if (running < best_running * running_gain) return std::nullopt;
  if (++stalls_ < stalls_to_full) return std::nullopt;
  // The sample of top_rate_ is among them (none before the best answered more than it).
  double settle = 0;
  for (const auto& s : since_best_)
    if (s.rate >= top_rate_ * settle_share) settle = std::max(settle, s.in_flight);
  return settle;
}

}  // namespace dibs::http
