#include "connect_window.hpp"

#include <algorithm>
#include <cmath>

namespace dibs::http {

void connect_window::proven(bool was_full, std::size_t ceiling) {
  dropped_since_proven_ = false;
  if (!was_full) return;  // the pace held nothing back: this says nothing of a bigger burst
  // No higher than the requests that may be in flight: past that it would pace nothing, and a
  // window grown far above the limit would let a later burst through at once.
  double top = std::max(initial, static_cast<double>(ceiling));
  if (cap_ > 0) top = std::min(top, cap_);
  if (++proven_ < allowed_) return;  // one more per window's worth
  proven_ = 0;
  allowed_ = std::max(allowed_, std::min(allowed_ + 1, top));
}

void connect_window::dropped(std::chrono::steady_clock::time_point opened, std::chrono::steady_clock::time_point now) {
  // One decrease per burst: the other handshakes of the same burst, dropped as well, come back
  // before any connection is proven at the new size, or were opened before the cut (as TCP takes
  // one loss per window, and none of what was sent before it shrank).
  if (dropped_since_proven_) return;
  if (opened != std::chrono::steady_clock::time_point{} && opened < cut_at_) return;
  dropped_since_proven_ = true;
  cut_at_ = now;
  allowed_ = std::max(floor, std::floor(allowed_ / 2));
  cap_ = allowed_;
  proven_ = 0;
}

}  // namespace dibs::http
