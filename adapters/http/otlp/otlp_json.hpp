// An OTLP ExportTraceServiceRequest in OTLP/JSON (opentelemetry.io/docs/specs/otlp, "JSON
// Protobuf Encoding"): lowerCamelCase names, trace and span ids as lower-case hex (not base64),
// enums as numbers, 64-bit integers (times in ns since the epoch, int attributes) as decimal
// strings. One resource (the process) and one instrumentation scope ("dibs"). A pure function.
#pragma once

#include <dibs/tracing.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dibs::http {

struct otlp_resource {
  std::string service_name = "dibs";
  // More resource attributes (service.instance.id, ...), as string values.
  std::vector<std::pair<std::string, std::string>> attributes;
};

std::string otlp_trace_request_json(const otlp_resource& resource, const std::vector<span_record>& spans);

}  // namespace dibs::http
