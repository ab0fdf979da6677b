#include "rate_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace dibs {

rate_block_grant grant_block(const rate_bucket_state& s, std::int64_t now_us, std::uint32_t want, std::int64_t interval_us,
                             std::int64_t saved_us) {
  want = std::max<std::uint32_t>(want, 1);
  interval_us = std::max<std::int64_t>(interval_us, 1);
  const std::int64_t start = std::max({s.tat_us, now_us - std::max<std::int64_t>(saved_us, 0), s.paused_until_us});
  rate_block_grant g;
  g.next = s;
  g.next.tat_us = start + static_cast<std::int64_t>(want) * interval_us;
  g.block.granted = want;
  g.block.starts_in = std::chrono::microseconds(start - now_us);
  g.block.paused_for = std::chrono::microseconds(paused_for_us(s, now_us));
  return g;
}

rate_bucket_state pause_bucket(const rate_bucket_state& s, std::int64_t now_us, std::int64_t for_us) {
  auto next = s;
  next.paused_until_us = std::max(s.paused_until_us, now_us + std::max<std::int64_t>(for_us, 0));
  return next;
}

std::int64_t paused_for_us(const rate_bucket_state& s, std::int64_t now_us) {
  return std::max<std::int64_t>(0, s.paused_until_us - now_us);
}

std::uint32_t block_size(double per_second) {
  if (!(per_second > 0)) return 1;
  const double half_second = std::floor(per_second * 0.5);
  return static_cast<std::uint32_t>(std::clamp(half_second, 1.0, 100000.0));
}

}  // namespace dibs
