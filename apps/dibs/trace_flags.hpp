// Traces of the run's items (--otlp-endpoint, OpenTelemetry's OTEL_* variables): the exporter is
// made before the run and finished after it (what waits is sent, for a moment at most:
// otlp_exporter.hpp). The traceparent header on API calls is api_flags' (--no-traceparent).
#pragma once

#include "adapters/http/otlp/otlp_exporter.hpp"

#include <dibs/engine_config.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace dibs::cli {

struct trace_flags {
  std::optional<std::string> otlp_endpoint;

  void add_to(CLI::App& cmd);
  // With an endpoint (the flag or OTEL_EXPORTER_OTLP_ENDPOINT): starts the exporter and sets
  // cfg.traces and cfg.trace_sample_ratio. Throws std::invalid_argument naming the flag or variable.
  void apply(engine_config& cfg, const http::tls_options& tls);
  // After the run: sends what waits (bounded), and says on `report` what was exported and dropped.
  void finish(std::FILE* report) const;

 private:
  std::shared_ptr<http::otlp_exporter> exporter_;
};

}  // namespace dibs::cli
