// OTLP/JSON as the spec spells it (adapters/http/otlp/otlp_json.hpp), its settings from the
// environment (otlp_settings.hpp) and an API call's span (call_span.hpp), without a collector.
#include "adapters/http/otlp/otlp_json.hpp"
#include "adapters/http/otlp/otlp_settings.hpp"
#include "adapters/http/processor/call_span.hpp"

#include <catch2/catch.hpp>

#include <map>

namespace {
dibs::span_record sample_span() {
  dibs::span_record s;
  s.trace = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  s.span = {0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
  s.name = "dibs.item";
  s.kind = dibs::span_kind::consumer;
  s.start = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'700'000'000'123'456'789));
  s.end = s.start + std::chrono::milliseconds(5);
  s.set("dibs.item.key", "a \"quoted\" key");
  s.set("dibs.item.attempt", 2);
  s.status = dibs::span_status::error;
  s.status_message = "HTTP 404";
  return s;
}

dibs::http::env_lookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("otlp json: ids in hex, enums as numbers, 64-bit integers as strings", "[otlp]") {
  dibs::http::otlp_resource r;
  r.service_name = "geo-run";
  const auto json = dibs::http::otlp_trace_request_json(r, {sample_span()});
  CHECK(json.find(R"("traceId":"4bf92f3577b34da6a3ce929d0e0e4736")") != std::string::npos);
  CHECK(json.find(R"("spanId":"00f067aa0ba902b7")") != std::string::npos);
  CHECK(json.find("parentSpanId") == std::string::npos);  // a root span
  CHECK(json.find(R"("kind":5)") != std::string::npos);
  CHECK(json.find(R"("startTimeUnixNano":"1700000000123456789")") != std::string::npos);
  CHECK(json.find(R"("endTimeUnixNano":"1700000000128456789")") != std::string::npos);
  CHECK(json.find(R"({"key":"dibs.item.attempt","value":{"intValue":"2"}})") != std::string::npos);
  CHECK(json.find(R"({"key":"dibs.item.key","value":{"stringValue":"a \"quoted\" key"}})") != std::string::npos);
  CHECK(json.find(R"("status":{"code":2,"message":"HTTP 404"})") != std::string::npos);
  CHECK(json.find(R"({"key":"service.name","value":{"stringValue":"geo-run"}})") != std::string::npos);
  CHECK(json.rfind(R"({"resourceSpans":[{"resource":)", 0) == 0);
}

TEST_CASE("otlp json: a child names its parent", "[otlp]") {
  auto s = sample_span();
  s.parent = {1, 2, 3, 4, 5, 6, 7, 8};
  s.status = dibs::span_status::unset;
  const auto json = dibs::http::otlp_trace_request_json({}, {s});
  CHECK(json.find(R"("parentSpanId":"0102030405060708")") != std::string::npos);
  CHECK(json.find(R"("status":{})") != std::string::npos);
}

TEST_CASE("otlp settings: the flag, then the traces endpoint, then the base endpoint", "[otlp]") {
  using dibs::http::otlp_settings_from;
  CHECK_FALSE(otlp_settings_from(std::nullopt, env_of({})).enabled());
  CHECK(otlp_settings_from(std::string("http://127.0.0.1:4318"), env_of({})).url == "http://127.0.0.1:4318/v1/traces");
  CHECK(otlp_settings_from(std::nullopt, env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/otlp/"}})).url ==
        "http://c:4318/otlp/v1/traces");
  CHECK(otlp_settings_from(std::nullopt, env_of({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:9/t"},
                                                 {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}})).url == "http://c:9/t");
  CHECK(otlp_settings_from(std::string("http://a:1"), env_of({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:2"}})).url ==
        "http://a:1/v1/traces");
}

TEST_CASE("otlp settings: headers, service name, sampler ratio from the environment", "[otlp]") {
  const auto s = dibs::http::otlp_settings_from(
      std::string("http://c:4318"), env_of({{"OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret, x-tenant = t1"},
                                            {"OTEL_SERVICE_NAME", "geo"},
                                            {"OTEL_TRACES_SAMPLER_ARG", "0.1"}}));
  CHECK(s.headers == "api-key: s=cret\r\nx-tenant: t1\r\n");
  CHECK(s.service_name == "geo");
  CHECK(s.sample_ratio == Approx(0.1));
  CHECK_THROWS_WITH(dibs::http::otlp_settings_from(std::nullopt, env_of({{"OTEL_TRACES_SAMPLER_ARG", "2"}})),
                    Catch::Contains("OTEL_TRACES_SAMPLER_ARG"));
  CHECK_THROWS_WITH(dibs::http::otlp_settings_from(std::nullopt, env_of({{"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}})),
                    Catch::Contains("OTEL_EXPORTER_OTLP_HEADERS"));
  CHECK_THROWS(dibs::http::otlp_header_lines("a=b%0D%0AInjected: 1"));
}

TEST_CASE("call span: HTTP client conventions, query values and passwords never shown", "[otlp]") {
  const auto t = dibs::http::url_template::parse("http://127.0.0.1:8080/json/{ip}?key=S3CRET&fields=a,b");
  const auto url = dibs::http::redacted_url(t, "/json/8.8.8.8?key=S3CRET&fields=a,b");
  CHECK(url.find("S3CRET") == std::string::npos);
  CHECK(url.find("a,b") == std::string::npos);
  CHECK(url.rfind("http://127.0.0.1:8080/json/8.8.8.8?key=", 0) == 0);
  dibs::trace_context item;
  item.trace = sample_span().trace;
  item.span = {9, 9, 9, 9, 9, 9, 9, 9};
  dibs::http::response r;
  r.status = 503;
  dibs::http::call_facts facts{"GET", url, "127.0.0.1", 8080, 3, {}, {}};
  const auto s = dibs::http::call_span(item, {1, 1, 1, 1, 1, 1, 1, 1}, facts, r);
  CHECK(s.parent == item.span);
  CHECK(s.kind == dibs::span_kind::client);
  CHECK(s.status == dibs::span_status::error);
  std::map<std::string, std::string> attrs;
  for (const auto& a : s.attributes)
    attrs[a.key] = std::holds_alternative<std::string>(a.value) ? std::get<std::string>(a.value)
                                                                : std::to_string(std::get<std::int64_t>(a.value));
  CHECK(attrs["http.request.method"] == "GET");
  CHECK(attrs["http.response.status_code"] == "503");
  CHECK(attrs["http.request.resend_count"] == "2");
  CHECK(attrs["server.port"] == "8080");
  CHECK(attrs["error.type"] == "503");
}

TEST_CASE("call span: an LLM's answer carries the GenAI conventions' model and tokens", "[otlp]") {
  dibs::trace_context item;
  item.trace = sample_span().trace;
  item.span = {9, 9, 9, 9, 9, 9, 9, 9};
  dibs::http::response r;
  r.status = 200;
  r.body = R"({"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}})";
  dibs::http::call_facts facts{"POST", "http://127.0.0.1/v1/chat/completions", "127.0.0.1", 80, 1, {}, {}};
  const auto s = dibs::http::call_span(item, {1, 1, 1, 1, 1, 1, 1, 1}, facts, r);
  std::map<std::string, std::string> attrs;
  for (const auto& a : s.attributes)
    attrs[a.key] = std::holds_alternative<std::string>(a.value) ? std::get<std::string>(a.value)
                                                                : std::to_string(std::get<std::int64_t>(a.value));
  CHECK(attrs["gen_ai.usage.input_tokens"] == "9");
  CHECK(attrs["gen_ai.usage.output_tokens"] == "20");
  CHECK(attrs["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18");
  r.body = R"({"status":"success","country":"France"})";  // another API: none of them
  const auto plain = dibs::http::call_span(item, {1, 1, 1, 1, 1, 1, 1, 1}, facts, r);
  for (const auto& a : plain.attributes) CHECK(a.key.rfind("gen_ai.", 0) != 0);
}
