// The rate a stub saw, from the times it answered (tests only).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace dibs::test {

// The most answers within any `window` (a sliding window starting at each answer).
inline std::size_t busiest(std::vector<std::chrono::steady_clock::time_point> t, std::chrono::milliseconds window) {
  std::sort(t.begin(), t.end());
  std::size_t best = 0;
  for (std::size_t i = 0, j = 0; i < t.size(); ++i) {
    while (t[i] - t[j] >= window) ++j;
    best = std::max(best, i - j + 1);
  }
  return best;
}

}  // namespace dibs::test
