// A histogram with fixed upper bounds, updated with relaxed atomics from any shard and read for
// Prometheus (cumulative buckets, sum, count). Cheap enough to record every call.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace dibs {

template <std::size_t N>
class histogram {
 public:
  // `bounds`: the upper bounds of the buckets, increasing; one more bucket (+Inf) is implied.
  constexpr histogram(std::initializer_list<double> bounds) {
    std::size_t i = 0;
    for (double b : bounds)
      if (i < N) bounds_[i++] = b;
  }

  void record(double v) {
    std::size_t i = 0;
    while (i < N && v > bounds_[i]) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    // The sum in micro-units, so it can be an integer atomic.
    sum_micros_.fetch_add(static_cast<std::uint64_t>(v * 1e6), std::memory_order_relaxed);
  }

  static constexpr std::size_t size() { return N; }
  double bound(std::size_t i) const { return bounds_[i]; }
  // Observations <= bound(i) (i == N: all of them).
  std::uint64_t cumulative(std::size_t i) const {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k <= i && k <= N; ++k) n += counts_[k].load(std::memory_order_relaxed);
    return n;
  }
  std::uint64_t count() const { return cumulative(N); }
  double sum() const { return static_cast<double>(sum_micros_.load(std::memory_order_relaxed)) / 1e6; }

 private:
  std::array<double, N> bounds_{};
  std::array<std::atomic<std::uint64_t>, N + 1> counts_{};
  std::atomic<std::uint64_t> sum_micros_{0};
};

}  // namespace dibs
