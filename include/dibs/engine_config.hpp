// Everything that tunes one engine run. The CLI flags map onto these one to one (claim_batch
// sets claim_batch).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace dibs {

class span_exporter;  // tracing.hpp

struct engine_config {
  // 0 = one per core, but no more than keep two claim batches in flight each: a shard with
  // fewer claims smaller batches, so its store round trips per item grow (effective_shards).
  std::size_t shards = 0;
  std::size_t concurrency = 1000;   // pipelines for the whole process, split across shards
  std::size_t claim_batch = 100;    // items per claim
  std::chrono::milliseconds lease{60'000};
  std::chrono::milliseconds grace{1'000};
  std::size_t flush_size = 0;       // write completions once this many are buffered; 0 = claim_batch
  std::chrono::milliseconds flush_linger{5};   // ... or once the oldest has waited this long, with nothing running
  std::chrono::milliseconds flush_linger_running{100};  // ... this long while the shard's items still run (0: flush_linger)
  // One store write carries at most the flush size in items and this many bytes (answers
  // included): a server has a largest statement it takes (MySQL's max_allowed_packet).
  std::size_t write_max_bytes = 4 << 20;
  // A shard claims nothing while this many of its outcomes wait to be written (the store is
  // down): memory and held leases stay bounded. 0 = the shard's concurrency + claim_batch.
  std::size_t unwritten_limit = 0;
  int max_attempts = 5;             // a retry after this many claims fails the item instead
  // A call running longer is abandoned (its processor cancelled) and the item retried; 0 = never.
  std::chrono::milliseconds max_processing{0};
  std::chrono::milliseconds shutdown_timeout{10'000};  // in-flight work may finish this long after stop
  // The API-wide outage breaker: after this many API-level failures in a row (outcome::api_down)
  // nothing is sent but one probe, every probe_min doubling to probe_max, until the API answers;
  // items that failed meanwhile wait under their leases and spend no attempt. 0 = off.
  std::size_t circuit_trip_after = 5;
  std::chrono::milliseconds circuit_probe_min{1'000};
  std::chrono::milliseconds circuit_probe_max{30'000};
  bool follow = false;              // keep polling when nothing is left, instead of ending
  std::chrono::milliseconds idle_backoff_min{10};
  std::chrono::milliseconds idle_backoff_max{1'000};   // 5 s would be kinder for follow
  std::string worker_prefix;        // "" = host-pid; each shard appends "-<index>"
  // Traces of items (tracing.hpp): a span per claim of an item, its calls and its write, handed
  // to this exporter. Null (the default): no trace is made.
  std::shared_ptr<span_exporter> traces;
  // Head sampling: the share of item traces exported (OpenTelemetry's TraceIdRatioBased); failed
  // items are exported whatever it is.
  double trace_sample_ratio = 1.0;

  std::size_t effective_shards() const;
  std::size_t effective_flush_size() const { return flush_size ? flush_size : claim_batch; }
  // Throws setting_error (a std::invalid_argument) naming the bad setting as this struct does
  // ("lease must be at least 10 ms"); a program maps the name to its own (the CLI to its flag).
  void validate() const;
};

}  // namespace dibs
