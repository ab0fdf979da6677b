#include "otlp_settings.hpp"

#include <dibs/setting_error.hpp>

#include <cctype>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace dibs::http {

namespace {
std::string_view otlp_trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string otlp_percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned v = 0;
      const auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      if (r.ec == std::errc{} && r.ptr == s.data() + i + 3) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool otlp_header_name_ok(std::string_view n) {
  if (n.empty()) return false;
  for (const unsigned char c : n)
    if (!(std::isalnum(c) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

bool otlp_header_value_ok(std::string_view v) {
  for (const unsigned char c : v)
    if (c == '\r' || c == '\n' || c == 0) return false;
  return true;
}

template <class T>
std::optional<T> otlp_number_in(const env_lookup& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  const std::string_view text = otlp_trimmed(v);
  T out{};
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size())
    throw setting_error(name, "must be a number, not '" + std::string(text) + "'");
  return out;
}
}  // namespace

std::string traces_url(std::string_view base) {
  std::string out(otlp_trimmed(base));
  const auto scheme = out.find("://");
  const auto path = out.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos || out.back() != '/') out += '/';
  return out + "v1/traces";
}

std::string otlp_header_lines(std::string_view value) {
  std::string out;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const auto pair = otlp_trimmed(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) throw std::invalid_argument("a header must be name=value");
    const auto name = otlp_percent_decoded(otlp_trimmed(pair.substr(0, eq)));
    const auto val = otlp_percent_decoded(otlp_trimmed(pair.substr(eq + 1)));
    if (!otlp_header_name_ok(name)) throw std::invalid_argument("'" + name + "' is no header name");
    if (!otlp_header_value_ok(val)) throw std::invalid_argument("header " + name + "'s value holds a line break");
    out += name + ": " + val + "\r\n";
  }
  return out;
}

otlp_settings otlp_settings_from(const std::optional<std::string>& endpoint, const env_lookup& env) {
  otlp_settings s;
  const char* traces = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const char* base = env("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (endpoint && !endpoint->empty()) s.url = traces_url(*endpoint);
  else if (traces && *traces) s.url = otlp_trimmed(traces);
  else if (base && *base) s.url = traces_url(base);
  if (const char* h = env("OTEL_EXPORTER_OTLP_HEADERS"); h && *h) {
    try {
      s.headers = otlp_header_lines(h);
    } catch (const std::invalid_argument& e) {
      throw setting_error("OTEL_EXPORTER_OTLP_HEADERS", e.what());
    }
  }
  if (const char* n = env("OTEL_SERVICE_NAME"); n && !otlp_trimmed(n).empty()) s.service_name = otlp_trimmed(n);
  if (const char* r = env("OTEL_TRACES_SAMPLER_ARG"); r && *r) {
    const std::string text(otlp_trimmed(r));
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || !(v >= 0.0 && v <= 1.0))
      throw setting_error("OTEL_TRACES_SAMPLER_ARG", "must be a ratio between 0 and 1, not '" + text + "'");
    s.sample_ratio = v;
  }
  if (auto t = otlp_number_in<long>(env, "OTEL_EXPORTER_OTLP_TIMEOUT")) s.timeout = std::chrono::milliseconds(std::max(1L, *t));
  if (auto q = otlp_number_in<std::size_t>(env, "OTEL_BSP_MAX_QUEUE_SIZE")) s.max_queue = std::max<std::size_t>(1, *q);
  if (auto b = otlp_number_in<std::size_t>(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE")) s.max_batch = std::max<std::size_t>(1, *b);
  if (auto d = otlp_number_in<long>(env, "OTEL_BSP_SCHEDULE_DELAY")) s.schedule_delay = std::chrono::milliseconds(std::max(1L, *d));
  s.max_batch = std::min(s.max_batch, s.max_queue);
  return s;
}

}  // namespace dibs::http
