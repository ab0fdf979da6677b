// Process-wide counters, shared by all shards (relaxed atomics: they are figures, not signals).
#pragma once

#include <dibs/extra_figures.hpp>
#include <dibs/histogram.hpp>

#include <atomic>
#include <cstdint>

namespace dibs {

struct counters {
  std::atomic<std::uint64_t> claimed{0};
  std::atomic<std::uint64_t> completed{0};  // done with data (no_data apart)
  // Done with the API's definitive "no data" answer written as the result (outcome::no_data).
  std::atomic<std::uint64_t> no_data{0};
  std::atomic<std::uint64_t> failed{0};
  std::atomic<std::uint64_t> lost_leases{0};
  std::atomic<std::uint64_t> released{0};   // given back at shutdown
  std::atomic<std::uint64_t> retries{0};    // given back with a delay, to be tried again
  // Retries given back and not claimed again yet (an estimate: a retry another process claims
  // is never seen again, so read it clamped to what is left): the CLI's ETA says "retrying N"
  // instead of 0m00s while only these are left.
  std::atomic<std::int64_t> retries_waiting{0};
  std::atomic<std::uint64_t> renewals{0};
  std::atomic<std::uint64_t> store_errors{0};
  std::atomic<std::int64_t> in_flight{0};   // claimed and being processed
  std::atomic<std::int64_t> held{0};        // leases this process holds (prefetched + in flight + unflushed)
  std::atomic<std::uint64_t> abandoned{0};  // calls cancelled at max_processing
  std::atomic<std::uint64_t> circuit_trips{0};  // times a shard found the API down
  std::atomic<std::int64_t> circuit_open{0};    // shards whose circuit is open or probing now
  std::atomic<std::int64_t> waiting_for_api{0}; // items kept under lease until the API answers
  // Answer reuse (a processor that shares one call among items whose request is identical):
  // items that made the call, took a cached answer, or joined the same call in flight. All 0
  // when the processor does not reuse answers.
  std::atomic<std::uint64_t> answer_calls{0};
  std::atomic<std::uint64_t> answers_reused{0};
  std::atomic<std::uint64_t> answers_joined{0};
  std::atomic<std::uint64_t> answers_from_store{0};  // of answers_reused: found in the store's answers

  // From the claim to the outcome (done, retried or failed), by this process's clock.
  histogram<12> claim_to_outcome_s{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60};
  histogram<9> claim_batch_size{0, 1, 5, 10, 25, 50, 100, 250, 1000};

  // What adapters count of their own (an API's answers and latency: include/dibs/http/http_figures.hpp).
  extra_figures extras;
};

inline std::uint64_t load(const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); }
inline std::int64_t load(const std::atomic<std::int64_t>& c) { return c.load(std::memory_order_relaxed); }
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
inline void bump(std::atomic<std::int64_t>& c, std::int64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

}  // namespace dibs
