#include <dibs/http/http_figures.hpp>

#include <cstdio>

#include <string>

namespace dibs::http {

void http_figures::count(int status, double seconds) {
  const std::size_t cls = status >= 100 && status < 600 ? static_cast<std::size_t>(status / 100) : 0;
  responses[cls].fetch_add(1, std::memory_order_relaxed);
  if (status == 429) throttled.fetch_add(1, std::memory_order_relaxed);
  if (status == 429 || status == 503) refused.fetch_add(1, std::memory_order_relaxed);
  api_latency_s.record(seconds);
}

std::uint64_t http_figures::exchanges() const {
  std::uint64_t n = 0;
  for (const auto& c : responses) n += c.load(std::memory_order_relaxed);
  return n;
}

void http_figures::prometheus(prometheus_writer& w) const {
  w.metric("dibs_http_responses_total", "counter", "API exchanges by status class; class=\"none\": no answer.");
  static constexpr const char* classes[] = {"none", "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (std::size_t i = 0; i < 6; ++i)
    w.sample(std::string("dibs_http_responses_total{class=\"") + classes[i] + "\"}",
             static_cast<double>(responses[i].load(std::memory_order_relaxed)));
  w.counter("dibs_api_throttled_total", "API answers 429 Too Many Requests (each a call the API may bill that bought nothing).",
            static_cast<double>(throttled.load(std::memory_order_relaxed)));
  w.hist("dibs_api_latency_seconds", "API exchange time.", api_latency_s);
  w.hist("dibs_api_handshake_seconds", "A new connection's TCP (and TLS) handshake.", handshake_s);
  w.hist("dibs_api_connection_wait_seconds",
         "A call's wait for a connection to write on: the concurrency limit's permit, --max-connections, the pace of "
         "new connections (not the handshake).",
         connection_wait_s);
  w.counter("dibs_api_dropped_handshakes_total",
            "Requests sent again because the API's server never accepted their new connection (its backlog was full).",
            static_cast<double>(dropped_handshakes.load(std::memory_order_relaxed)));
  limits.prometheus(w);
  if (metered()) {
    w.metric("dibs_api_tokens_total", "counter", "Tokens the API's answers say their requests used (usage), by kind.");
    w.sample("dibs_api_tokens_total{kind=\"input\"}", static_cast<double>(tokens_in.load(std::memory_order_relaxed)));
    w.sample("dibs_api_tokens_total{kind=\"output\"}", static_cast<double>(tokens_out.load(std::memory_order_relaxed)));
  }
  if (const double limit = token_limit_per_minute.load(std::memory_order_relaxed); limit > 0)
    w.gauge("dibs_api_token_limit_per_minute", "The tokens a minute the API allows (given, or stated by its headers).", limit);
  if (priced()) w.counter("dibs_api_cost_total", "What the tokens used cost at the prices given (price).", cost());
}

void http_figures::add_counts(const http_figures& o) {
  constexpr auto r = std::memory_order_relaxed;
  for (std::size_t i = 0; i < responses.size(); ++i) responses[i].fetch_add(o.responses[i].load(r), r);
  throttled.fetch_add(o.throttled.load(r), r);
  refused.fetch_add(o.refused.load(r), r);
  api_stops.fetch_add(o.api_stops.load(r), r);
  dropped_handshakes.fetch_add(o.dropped_handshakes.load(r), r);
  tokens_in.fetch_add(o.tokens_in.load(r), r);
  tokens_out.fetch_add(o.tokens_out.load(r), r);
  if (o.token_limit_per_minute.load(r) > 0) token_limit_per_minute.store(o.token_limit_per_minute.load(r), r);
  if (o.priced()) {
    price_in.store(o.price_in.load(r), r);
    price_out.store(o.price_out.load(r), r);
  }
}

std::string http_figures::cost_text(double cost) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", cost);
  return buf;
}

double http_figures::cost() const {
  return static_cast<double>(tokens_in.load(std::memory_order_relaxed)) * price_in.load(std::memory_order_relaxed) +
         static_cast<double>(tokens_out.load(std::memory_order_relaxed)) * price_out.load(std::memory_order_relaxed);
}

}  // namespace dibs::http
