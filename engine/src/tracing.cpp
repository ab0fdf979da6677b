// The few functions of <dibs/tracing.hpp>: ids as hex, the traceparent header, the figures.
#include <dibs/tracing.hpp>

namespace dibs {

std::string hex_of(const std::uint8_t* bytes, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 0xf];
  }
  return out;
}

std::string traceparent_header(const trace_context& ctx, const span_id& call) {
  return "00-" + hex_of(ctx.trace) + "-" + hex_of(call) + (ctx.sampled ? "-01" : "-00");
}

void span_figures::prometheus(prometheus_writer& w) const {
  w.counter("dibs_trace_spans_exported_total", "Spans the OTLP collector accepted", static_cast<double>(exported.load()));
  w.metric("dibs_trace_spans_dropped_total", "counter",
           "Spans never delivered: the exporter's queue was full (queue_full), the collector refused them or did not "
           "answer (export_failed), or it had failed the last export and was not tried again yet (collector_down)");
  w.sample("dibs_trace_spans_dropped_total{reason=\"queue_full\"}", static_cast<double>(dropped_full.load()));
  w.sample("dibs_trace_spans_dropped_total{reason=\"export_failed\"}", static_cast<double>(dropped_failed.load()));
  w.sample("dibs_trace_spans_dropped_total{reason=\"collector_down\"}", static_cast<double>(dropped_down.load()));
  w.counter("dibs_trace_exports_failed_total", "OTLP export requests that failed (each dropped its batch)",
            static_cast<double>(exports_failed.load()));
}

}  // namespace dibs
