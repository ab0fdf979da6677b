// Traces of items (OpenTelemetry's model): the engine makes a span per claimed item, from the
// claim to its settled write, with children for each API call (the processor's, in
// outcome::spans) and for the store's write, and hands the finished spans to a span_exporter
// (the OTLP/HTTP one: adapters/http/otlp). Without an exporter (engine_config::traces null) no
// span is made: an item costs one branch more.
#pragma once

#include <dibs/extra_figures.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace dibs {

using trace_id = std::array<std::uint8_t, 16>;
using span_id = std::array<std::uint8_t, 8>;

// The item's place in its trace, as the processor sees it (job::trace): the trace, the item's own
// span (the parent of the processor's spans), and whether the trace is sampled (head sampling; a
// trace not sampled is still exported if the item fails). All zero when the run does not trace.
// `recording` false: the exporter drops everything now (its collector is down, its queue full),
// so a processor makes no span (the traceparent header is sent all the same).
struct trace_context {
  trace_id trace{};
  span_id span{};
  bool sampled = false;
  bool recording = true;
  // Asked of every call, traced or not: two loads, no loop.
  bool valid() const {
    std::uint64_t half[2];
    std::memcpy(half, trace.data(), sizeof half);
    return (half[0] | half[1]) != 0;
  }
};

// OpenTelemetry's SpanKind and Status.code, as OTLP numbers them.
enum class span_kind : int { internal = 1, server = 2, client = 3, producer = 4, consumer = 5 };
enum class span_status : int { unset = 0, ok = 1, error = 2 };

struct span_attribute {
  std::string key;
  using value_type = std::variant<std::string, std::int64_t, bool>;
  value_type value;
};

// One finished span.
struct span_record {
  trace_id trace{};
  span_id span{};
  span_id parent{};  // all zero: a root span
  std::string name;
  span_kind kind = span_kind::internal;
  std::chrono::system_clock::time_point start{};
  std::chrono::system_clock::time_point end{};
  std::vector<span_attribute> attributes;
  span_status status = span_status::unset;
  std::string status_message;

  void set(std::string key, std::string value) { attributes.push_back({std::move(key), std::move(value)}); }
  void set(std::string key, const char* value) { attributes.push_back({std::move(key), std::string(value)}); }
  void set(std::string key, std::int64_t value) { attributes.push_back({std::move(key), value}); }
  void set(std::string key, int value) { attributes.push_back({std::move(key), std::int64_t{value}}); }
};

// What an exporter did with the spans it was handed, for /metrics (dibs_trace_spans_*).
class span_figures final : public figures_source {
 public:
  std::atomic<std::uint64_t> exported{0};        // accepted by the collector
  std::atomic<std::uint64_t> dropped_full{0};    // the exporter's queue was full: never sent
  // The collector failed the last export: until it is tried again (a backoff of 1 s doubling to
  // 30 s), no span is made or queued (an item's own and its write's are counted here).
  std::atomic<std::uint64_t> dropped_down{0};
  std::atomic<std::uint64_t> dropped_failed{0};  // sent, but the collector refused them or did not answer
  std::atomic<std::uint64_t> exports_failed{0};  // requests that failed (each drops its batch)
  void prometheus(prometheus_writer& w) const override;
};

// Takes finished spans. export_spans is called from any shard's thread and must never block or
// wait for the network: an exporter queues (bounded) and drops what does not fit, counting it.
class span_exporter {
 public:
  virtual ~span_exporter() = default;
  virtual void export_spans(std::vector<span_record> spans) = 0;
  // The run's figures: the exporter counts what it sends and drops there (called once, before
  // the run starts, by the engine).
  virtual void count_in(span_figures& /*figures*/) {}
  // False while export_spans would drop what it is handed (its queue is full, its collector down):
  // the engine then counts an item's spans as dropped (dropped_now) without making them. Any thread.
  virtual bool accepting() const { return true; }
  virtual void dropped_now(std::size_t /*spans*/) {}
};

// The W3C Trace Context header value for a call made in span `call` of `ctx`'s trace:
// "00-<trace id>-<span id>-<01 sampled | 00>".
std::string traceparent_header(const trace_context& ctx, const span_id& call);

// Lower-case hex of an id (OTLP/JSON and traceparent spell ids so).
std::string hex_of(const std::uint8_t* bytes, std::size_t n);
template <std::size_t N>
std::string hex_of(const std::array<std::uint8_t, N>& id) {
  return hex_of(id.data(), N);
}

}  // namespace dibs
