// Process-wide counters, shared by all shards (relaxed atomics: they are figures, not signals).
#pragma once

#include <atomic>
#include <cstdint>

namespace dibs {

struct counters {
  std::atomic<std::uint64_t> claimed{0};
  std::atomic<std::uint64_t> completed{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> lost_leases{0};
  std::atomic<std::uint64_t> released{0};   // given back at shutdown
  std::atomic<std::uint64_t> retries{0};    // given back with a delay, to be tried again
  std::atomic<std::uint64_t> renewals{0};
  std::atomic<std::uint64_t> store_errors{0};
  std::atomic<std::int64_t> in_flight{0};   // claimed and being processed
  std::atomic<std::int64_t> held{0};        // leases this process holds (prefetched + in flight + unflushed)
};

inline std::uint64_t load(const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); }
inline std::int64_t load(const std::atomic<std::int64_t>& c) { return c.load(std::memory_order_relaxed); }
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
inline void bump(std::atomic<std::int64_t>& c, std::int64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

}  // namespace dibs
