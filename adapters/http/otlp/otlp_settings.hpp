// Where and how the OTLP/HTTP exporter sends traces, from the run's setting (otlp_endpoint) and
// OpenTelemetry's standard environment variables (opentelemetry.io/docs/specs/otel/configuration
// and .../protocol/exporter): OTEL_EXPORTER_OTLP_ENDPOINT (the base URL; traces go to its path +
// "/v1/traces"), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the URL as it is), OTEL_EXPORTER_OTLP_HEADERS
// ("k=v,k2=v2", values percent-decoded), OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER_ARG (the ratio
// of traceidratio samplers), OTEL_EXPORTER_OTLP_TIMEOUT (ms), OTEL_BSP_MAX_QUEUE_SIZE,
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_SCHEDULE_DELAY (ms). Pure: the environment is a function.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace dibs::http {

struct otlp_settings {
  std::string url;      // where traces are POSTed ("" : no tracing)
  std::string headers;  // header lines, each "Name: value\r\n"
  std::string service_name = "dibs";
  double sample_ratio = 1.0;
  std::chrono::milliseconds timeout{10'000};          // one export request, connect to last byte
  std::size_t max_queue = 2048;                       // spans waiting; more are dropped (counted)
  std::size_t max_batch = 512;                        // spans per request
  std::chrono::milliseconds schedule_delay{1'000};    // a smaller batch waits at most this long
  std::chrono::milliseconds shutdown_wait{2'000};     // the run's end waits this long for the rest
  bool enabled() const { return !url.empty(); }
};

using env_lookup = std::function<const char*(const char*)>;

// `endpoint`: the run's setting (a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT), which wins over
// the environment. Throws setting_error naming the setting or variable that is wrong.
otlp_settings otlp_settings_from(const std::optional<std::string>& endpoint, const env_lookup& env);

// "http://collector:4318" -> "http://collector:4318/v1/traces"; "http://c:4318/otlp/" -> "http://c:4318/otlp/v1/traces".
std::string traces_url(std::string_view base);
// OTEL_EXPORTER_OTLP_HEADERS as header lines; throws std::invalid_argument on a pair without '='
// or a name or value a header can't carry.
std::string otlp_header_lines(std::string_view value);

}  // namespace dibs::http
