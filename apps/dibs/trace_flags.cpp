#include "trace_flags.hpp"

#include "engine/src/worker_id.hpp"

#include <dibs/log.hpp>

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace dibs::cli {

void trace_flags::add_to(CLI::App& cmd) {
  cmd.add_option("--otlp-endpoint", otlp_endpoint,
                 "send a trace of every item (its claim, API calls, write) to this OpenTelemetry collector, OTLP over "
                 "HTTP with JSON (http://127.0.0.1:4318: traces go to /v1/traces); also OTEL_EXPORTER_OTLP_ENDPOINT, "
                 "OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER_ARG (the share of items traced; "
                 "failed items always are)")
      ->type_name("URL");
}

void trace_flags::apply(engine_config& cfg, const http::tls_options& tls) {
  auto s = http::otlp_settings_from(otlp_endpoint, [](const char* name) { return std::getenv(name); });
  if (!s.enabled()) return;
  http::otlp_resource r;
  r.service_name = s.service_name;
  r.attributes.emplace_back("service.instance.id", cfg.worker_prefix.empty() ? default_worker_prefix() : cfg.worker_prefix);
  r.attributes.emplace_back("telemetry.sdk.name", "dibs");
  r.attributes.emplace_back("telemetry.sdk.language", "cpp");
  cfg.trace_sample_ratio = s.sample_ratio;
  exporter_ = std::make_shared<http::otlp_exporter>(std::move(s), std::move(r), tls);
  cfg.traces = exporter_;
}

void trace_flags::finish(std::FILE* report) const {
  if (!exporter_) return;
  exporter_->shutdown();
  std::fprintf(report, "%s\n", exporter_->end_line().c_str());
}

}  // namespace dibs::cli
