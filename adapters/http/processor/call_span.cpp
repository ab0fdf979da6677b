#include "call_span.hpp"

#include "adapters/http/rate/request_tokens.hpp"

#include "engine/src/uri_redact.hpp"

namespace dibs::http {

std::string redacted_url(const url_template& t, std::string_view target) {
  const auto host = t.host().find(':') != std::string::npos ? "[" + t.host() + "]" : t.host();
  const bool default_port = t.port() == (t.scheme() == "https" ? 443 : 80);
  return redact_api_url(t.scheme() + "://" + host + (default_port ? "" : ":" + std::to_string(t.port())) +
                        std::string(target));
}

span_record call_span(const trace_context& item, const span_id& id, const call_facts& call, const response& r) {
  span_record s;
  s.trace = item.trace;
  s.span = id;
  s.parent = item.span;
  s.name = call.method;
  s.kind = span_kind::client;
  s.start = call.start;
  s.end = call.end;
  s.set("http.request.method", call.method);
  s.set("url.full", call.url);
  s.set("server.address", call.host);
  s.set("server.port", static_cast<std::int64_t>(call.port));
  s.set("dibs.attempt", call.attempt);
  if (call.attempt > 1) s.set("http.request.resend_count", call.attempt - 1);
  if (r.status) s.set("http.response.status_code", r.status);
  // An LLM's answer: the GenAI semantic conventions' model and tokens (from its usage).
  if (!r.ec && r.status >= 200 && r.status < 300 && r.body.find("usage") != std::string::npos) {
    if (const auto u = answer_usage(r.body); u.known()) {
      s.set("gen_ai.usage.input_tokens", u.input);
      s.set("gen_ai.usage.output_tokens", u.output);
      if (auto model = answer_model(r.body); !model.empty()) s.set("gen_ai.response.model", std::move(model));
    }
  }
  if (r.ec) {
    s.set("error.type", r.stage.empty() ? r.ec.message() : r.stage + ": " + r.ec.message());
    s.status = span_status::error;
    s.status_message = r.describe();
  } else if (r.status >= 400) {
    s.set("error.type", std::to_string(r.status));
    s.status = span_status::error;
  }
  return s;
}

}  // namespace dibs::http
