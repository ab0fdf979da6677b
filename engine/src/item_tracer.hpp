// One shard's tracing of its items (tracing.hpp): the trace an item's claim begins, what its
// settlement and its write add, and the finished spans handed to the run's exporter. Only made
// when the run traces (engine_config::traces); everything here runs on the shard's thread.
//
// An item's trace id is a hash of the item's key and a number drawn once per process: every
// claim of one item in this process (a retry claimed again) lands in the same trace, one item
// span per claim. Head sampling follows OpenTelemetry's TraceIdRatioBased rule on that id, so a
// trace is sampled or not as a whole; a trace not sampled is exported all the same when its item
// fails (or its lease is lost): failed items are always kept.
#pragma once

#include <dibs/job.hpp>
#include <dibs/tracing.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace dibs {

// The trace id of item `key` in a process whose trace seed is `seed`: 128 bits, never zero.
trace_id item_trace_id(std::uint64_t seed, std::string_view key);
// OpenTelemetry's TraceIdRatioBased decision: the id's last 8 bytes, read as a big-endian number
// without its top byte (56 bits), below ratio x 2^56. Ratio 1 keeps every trace, 0 none.
bool sampled_by_ratio(const trace_id& id, double ratio);

// What an item's trace holds while its lease is in the shard's book (held_lease::trace).
struct item_trace {
  trace_context ctx;
  std::chrono::system_clock::time_point start{};
  std::string key;
  int attempt = 0;
  std::vector<span_record> calls;  // the processor's spans (outcome::spans)
  std::string outcome;             // "done", "no_data", "retried", "released", "failed", "lease_lost"
  std::string reason;
  int http_status = 0;
  bool failed = false;
};

// The store write an item's outcome went out in.
struct traced_write {
  std::string operation;  // "complete", "release", "fail"
  std::chrono::system_clock::time_point start{};
  std::string store;  // the store's describe()
};

class item_tracer {
 public:
  item_tracer(span_exporter& out, double ratio, std::string worker);

  // The trace a claim of `key` begins (a fresh span id for this claim), and its book entry;
  // not recording while the exporter drops everything (trace_context::recording).
  std::unique_ptr<item_trace> begin(const std::string& key, int attempt);
  // The item's outcome: what it became, and the processor's spans (moved out of it).
  static void settled(item_trace& t, std::string outcome, std::string reason, int http_status, bool failed,
                      std::vector<span_record> calls);
  // The item is done with in this shard: its spans (the item, its calls, its write when given)
  // are kept for export if its trace is sampled or it failed.
  void finish(item_trace& t, const traced_write* write);
  // Hands what finish() kept to the exporter: one hand-over per flush, not per item.
  void flush();

 private:
  span_id new_span_id();

  span_exporter& out_;
  double ratio_;
  std::string worker_;
  std::mt19937_64 rng_;
  std::vector<span_record> ready_;
};

}  // namespace dibs
