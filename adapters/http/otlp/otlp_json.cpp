#include "otlp_json.hpp"

#include "engine/src/json_text.hpp"

#include <chrono>

namespace dibs::http {

namespace {
void otlp_key_value(std::string& out, const std::string& key, const span_attribute::value_type& value);

void otlp_string_value(std::string& out, const std::string& key, const std::string& value) {
  otlp_key_value(out, key, span_attribute::value_type{value});
}

void otlp_key_value(std::string& out, const std::string& key, const span_attribute::value_type& value) {
  out += "{\"key\":";
  append_json_string(out, key);
  out += ",\"value\":{";
  if (const auto* s = std::get_if<std::string>(&value)) {
    out += "\"stringValue\":";
    append_json_string(out, *s);
  } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
    out += "\"intValue\":\"" + std::to_string(*i) + "\"";  // int64: a string in OTLP/JSON
  } else {
    out += std::get<bool>(value) ? "\"boolValue\":true" : "\"boolValue\":false";
  }
  out += "}}";
}

std::string otlp_nanos(std::chrono::system_clock::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  return "\"" + std::to_string(ns < 0 ? 0 : ns) + "\"";
}

bool otlp_is_zero(const span_id& id) {
  for (auto b : id)
    if (b) return false;
  return true;
}

void otlp_span_json(std::string& out, const span_record& s) {
  out += "{\"traceId\":\"" + hex_of(s.trace) + "\",\"spanId\":\"" + hex_of(s.span) + "\"";
  if (!otlp_is_zero(s.parent)) out += ",\"parentSpanId\":\"" + hex_of(s.parent) + "\"";
  out += ",\"name\":";
  append_json_string(out, s.name);
  out += ",\"kind\":" + std::to_string(static_cast<int>(s.kind));
  out += ",\"startTimeUnixNano\":" + otlp_nanos(s.start);
  out += ",\"endTimeUnixNano\":" + otlp_nanos(s.end < s.start ? s.start : s.end);
  out += ",\"attributes\":[";
  for (std::size_t i = 0; i < s.attributes.size(); ++i) {
    if (i) out += ',';
    otlp_key_value(out, s.attributes[i].key, s.attributes[i].value);
  }
  out += "],\"status\":{";
  if (s.status != span_status::unset) {
    out += "\"code\":" + std::to_string(static_cast<int>(s.status));
    if (!s.status_message.empty()) {
      out += ",\"message\":";
      append_json_string(out, s.status_message);
    }
  }
  out += "}}";
}
}  // namespace

std::string otlp_trace_request_json(const otlp_resource& resource, const std::vector<span_record>& spans) {
  std::string out = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[";
  otlp_string_value(out, "service.name", resource.service_name);
  for (const auto& [k, v] : resource.attributes) {
    out += ',';
    otlp_string_value(out, k, v);
  }
  out += "]},\"scopeSpans\":[{\"scope\":{\"name\":\"dibs\"},\"spans\":[";
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (i) out += ',';
    otlp_span_json(out, spans[i]);
  }
  out += "]}]}]}";
  return out;
}

}  // namespace dibs::http
