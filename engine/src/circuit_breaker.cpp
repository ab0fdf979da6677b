#include "circuit_breaker.hpp"

#include <algorithm>

namespace dibs {

bool circuit_breaker::failed(const std::string& item, const std::string& why, clock::time_point now, bool answered) {
  switch (state_) {
    case state::closed:
      last_reason_ = why;
      if (streak_.empty()) streak_since_ = now;
      if (std::find(streak_.begin(), streak_.end(), item) == streak_.end()) {  // else the same item again
        streak_.push_back(item);
        if (!answered) ++silent_;
      }
      return outage_held(now);
    case state::probing:
      if (item != probe_) return false;  // a call sent before the circuit opened: nothing new
      last_reason_ = why;
      delay_ = std::min(delay_ * 2, s_.probe_max);
      reopen(now);
      return false;
    case state::open:
      return false;  // a call sent before the circuit opened: it tells nothing new
  }
  return false;
}

bool circuit_breaker::outage_held(clock::time_point now) {
  if (state_ != state::closed || s_.trip_after == 0 || streak_.size() < s_.trip_after) return false;
  // Failures with no answer are an outage at once; 5xx answers only once they span min_outage.
  if (silent_ < s_.trip_after && now - streak_since_ < s_.min_outage) return false;
  delay_ = s_.probe_min;
  reopen(now);
  return true;
}

bool circuit_breaker::answered() {
  streak_.clear();
  silent_ = 0;
  if (state_ == state::closed) return false;
  state_ = state::closed;
  delay_ = s_.probe_min;
  probed_.clear();
  return true;
}

void circuit_breaker::probe_sent(const std::string& item) {
  state_ = state::probing;
  probe_ = item;
  if (!item.empty()) probed_.insert(item);
}

void circuit_breaker::inconclusive(const std::string& item, clock::time_point now) {
  if (state_ != state::probing || item != probe_) return;
  reopen(now);
}

const char* to_string(circuit_breaker::state s) {
  switch (s) {
    case circuit_breaker::state::closed: return "closed";
    case circuit_breaker::state::open: return "open";
    case circuit_breaker::state::probing: return "probing";
  }
  return "?";
}

}  // namespace dibs
