#include "circuit_breaker.hpp"

#include <algorithm>

namespace dibs {

bool circuit_breaker::failed(const std::string& why, clock::time_point now) {
  last_reason_ = why;
  ++in_a_row_;
  switch (state_) {
    case state::closed:
      if (s_.trip_after == 0 || in_a_row_ < s_.trip_after) return false;
      delay_ = s_.probe_min;
      next_probe_ = now + delay_;
      state_ = state::open;
      return true;
    case state::probing:
      delay_ = std::min(delay_ * 2, s_.probe_max);
      next_probe_ = now + delay_;
      state_ = state::open;
      return false;
    case state::open:
      return false;  // a call sent before the circuit opened: it tells nothing new
  }
  return false;
}

bool circuit_breaker::answered() {
  in_a_row_ = 0;
  if (state_ == state::closed) return false;
  state_ = state::closed;
  delay_ = s_.probe_min;
  return true;
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
