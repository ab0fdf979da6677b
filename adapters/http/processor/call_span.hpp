// An API call as a span of its item's trace (tracing.hpp), by OpenTelemetry's HTTP client
// conventions: named by its method, kind client, with http.request.method, url.full,
// server.address, server.port, http.response.status_code, http.request.resend_count (the
// item's claims before this one) and error.type when it failed. Pure functions: unit-tested.
#pragma once

#include <dibs/http/client.hpp>
#include <dibs/http/url_template.hpp>
#include <dibs/tracing.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace dibs::http {

// The URL of a request made from `t` (its target: path and query) as messages and spans show it:
// every query value masked (redact_api_url: an API key is most often one), no password, no
// fragment: "https://api.example/v1/geo?key=***&ip=***". The path is kept.
std::string redacted_url(const url_template& t, std::string_view target);

struct call_facts {
  const char* method = "GET";
  std::string url;  // redacted_url's
  std::string host;
  std::uint16_t port = 0;
  int attempt = 1;  // the item's claims, this one included
  std::chrono::system_clock::time_point start{};
  std::chrono::system_clock::time_point end{};
};

// The span of one call made in span `id` of the item's trace `item` (its parent: the item's span).
span_record call_span(const trace_context& item, const span_id& id, const call_facts& call, const response& r);

}  // namespace dibs::http
