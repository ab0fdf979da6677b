#include "control_json.hpp"

#include <dibs/http/http_figures.hpp>
#include <dibs/http/rate_limiter.hpp>

#include "engine/src/json_text.hpp"
#include <dibs/setting_error.hpp>
#include "engine/src/worker_id.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dibs::http {

namespace {
// Whether an object in `e` has a key twice: parsers disagree on which copy counts (simdjson
// takes the first, most others the last), so a proxy or log reader could see another body than
// the one acted on. Such a body is refused.
bool key_twice(simdjson::dom::element e) {
  simdjson::dom::object o;
  simdjson::dom::array a;
  if (e.get_object().get(o) == simdjson::SUCCESS) {
    std::vector<std::string_view> keys;
    for (auto field : o) {
      keys.push_back(field.key);
      if (key_twice(field.value)) return true;
    }
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
  }
  if (e.get_array().get(a) == simdjson::SUCCESS)
    for (auto v : a)
      if (key_twice(v)) return true;
  return false;
}

// The body as one JSON object, or the error to answer.
std::optional<simdjson::dom::object> object_of(simdjson::dom::parser& p, const std::string& body, std::string& error) {
  simdjson::dom::element doc;
  if (p.parse(body).get(doc) != simdjson::SUCCESS) {
    error = "the body must be a JSON object";
    return std::nullopt;
  }
  simdjson::dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) {
    error = "the body must be a JSON object";
    return std::nullopt;
  }
  if (key_twice(doc)) {
    error = "the body has a key twice in one object";
    return std::nullopt;
  }
  return o;
}
}  // namespace

parsed_body<std::string> release_body(const std::string& body) {
  parsed_body<std::string> r;
  simdjson::dom::parser p;
  auto o = object_of(p, body, r.error);
  if (!o) return r;
  std::string_view name;
  if ((*o)["worker"].get_string().get(name) != simdjson::SUCCESS) {
    r.error = "\"worker\" must be a worker id (a string), e.g. {\"worker\":\"web-1\"}";
    return r;
  }
  if (auto problem = worker_id_problem(name); !problem.empty()) {
    r.error = "\"worker\" " + problem;
    return r;
  }
  r.value = std::string(name);
  return r;
}

parsed_body<std::size_t> concurrency_body(const std::string& body) {
  parsed_body<std::size_t> r;
  simdjson::dom::parser p;
  auto o = object_of(p, body, r.error);
  if (!o) return r;
  std::uint64_t n = 0;
  if ((*o)["concurrency"].get_uint64().get(n) != simdjson::SUCCESS || n < 1 || n > 1'000'000) {
    r.error = "\"concurrency\" must be a whole number from 1 to 1000000";
    return r;
  }
  r.value = static_cast<std::size_t>(n);
  return r;
}

parsed_body<double> rate_body(const std::string& body) {
  parsed_body<double> r;
  simdjson::dom::parser p;
  auto o = object_of(p, body, r.error);
  if (!o) return r;
  simdjson::dom::element v;
  if ((*o)["rate"].get(v) != simdjson::SUCCESS) {
    r.error = "\"rate\" is missing: {\"rate\":\"45/min\"}, {\"rate\":2.5} (per second) or {\"rate\":null} (no limit)";
    return r;
  }
  if (v.is_null()) {
    r.value = 0;
    return r;
  }
  std::string_view text;
  double n = 0;
  if (v.get_string().get(text) == simdjson::SUCCESS) {
    if (auto per_second = parse_rate(std::string(text))) {
      r.value = *per_second;
      return r;
    }
  } else if (v.get_double().get(n) == simdjson::SUCCESS && n > 0 && n <= 1e9) {
    r.value = n;
    return r;
  }
  r.error = "\"rate\" must be N/s, N/min or N/h (as " + setting_name("rate") + "), a number per second, or null for no limit";
  return r;
}

parsed_body<retry_filter> retry_body(const std::string& body) {
  parsed_body<retry_filter> r;
  simdjson::dom::parser p;
  auto o = object_of(p, body.empty() ? std::string("{}") : body, r.error);
  if (!o) return r;
  retry_filter which;
  // A member that is text, null or absent; anything else is the 400's reason.
  auto text = [&](const char* key, const char* meaning, auto& into) {
    simdjson::dom::element v;
    if ((*o)[key].get(v) != simdjson::SUCCESS || v.is_null()) return true;
    std::string_view t;
    if (v.get_string().get(t) != simdjson::SUCCESS) {
      r.error.append("\"").append(key).append("\" must be text: ").append(meaning);  // (g++ 12 warns on + here)
      return false;
    }
    into = std::string(t);
    return true;
  };
  if (!text("reason", "a part of failure reasons", which.reason_contains) ||
      !text("reason_is", "a failure reason as /status lists it", which.reason_is))
    return r;
  r.value = std::move(which);
  return r;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

double renewed_s_ago(const lease_holder& h, std::chrono::milliseconds lease) {
  return std::max(0.0, std::chrono::duration<double>(lease).count() - h.latest_until_s);
}

holder_state read_holder(const lease_holder& h, bool this_process) {
  holder_state s;
  s.live = this_process || leases_renewed(h);
  (s.live ? s.retry_due : s.expired) = h.expired;
  return s;
}

std::string workers_json(const std::string& worker_id, std::chrono::milliseconds lease, const std::vector<shard_view>& shards,
                         bool store_available, const std::optional<std::vector<lease_holder>>& holders,
                         const std::string& store_error) {
  std::string out = "{\"worker_id\":" + json_string(worker_id) +
                    ",\"lease_s\":" + json_number(std::chrono::duration<double>(lease).count()) + ",\"this_process\":[";
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto& s = shards[i];
    out += (i ? ",{" : "{");
    out += "\"by\":" + json_string(s.by) + ",\"in_flight\":" + std::to_string(s.in_flight) +
           ",\"held\":" + std::to_string(s.held) + ",\"concurrency\":" + std::to_string(s.concurrency) +
           ",\"breaker\":" + json_string(s.breaker) + "}";
  }
  out += std::string("],\"store_available\":") + (store_available ? "true" : "false") + ",\"store\":[";
  if (holders) {
    for (std::size_t i = 0; i < holders->size(); ++i) {
      const auto& h = (*holders)[i];
      const bool ours = worker_owns(h.by, worker_id);
      out += (i ? ",{" : "{");
      const auto state = read_holder(h, ours);
      out += "\"by\":" + json_string(h.by) + ",\"state\":" + (state.live ? "\"live\"" : "\"stale\"") +
             ",\"leased\":" + std::to_string(h.leased) + ",\"expired\":" + std::to_string(state.expired) +
             ",\"retry_due\":" + std::to_string(state.retry_due) +
             ",\"earliest_until_s\":" + json_number(h.earliest_until_s) +
             ",\"latest_until_s\":" + json_number(h.latest_until_s) +
             ",\"renewed_s_ago\":" + json_number(renewed_s_ago(h, lease)) +
             ",\"this_process\":" + (ours ? "true" : "false") + "}";
    }
  }
  out += "]";
  if (!store_error.empty()) out += ",\"store_error\":" + json_string(store_error);
  return out + "}";
}

breaker_summary summarize_breakers(const std::vector<shard_view>& shards) {
  breaker_summary b;
  for (const char* state : {"open", "probing"}) {
    auto it = std::find_if(shards.begin(), shards.end(), [&](const shard_view& s) { return s.breaker == state; });
    if (it != shards.end()) {
      b.state = state;
      b.reason = it->breaker_reason;
      return b;
    }
  }
  for (const auto& s : shards)
    if (!s.breaker_reason.empty()) {
      b.reason = s.breaker_reason;
      break;
    }
  return b;
}

std::string status_extras_json(const engine& e, const std::optional<std::vector<failure_reason>>& reasons,
                               std::uint64_t operator_released) {
  const auto breaker = summarize_breakers(e.shards());
  const auto rate = e.rate_per_second();
  std::string out = ",\"worker_id\":" + json_string(e.worker_prefix()) + ",\"concurrency\":" + std::to_string(e.concurrency()) +
                    ",\"rate_per_second\":" + (rate ? json_number(*rate) : "null") +
                    ",\"rate_adjustable\":" + (e.rate_adjustable() ? "true" : "false") +
                    ",\"breaker\":{\"state\":" + json_string(breaker.state) + ",\"reason\":" +
                    (breaker.reason.empty() ? "null" : json_string(breaker.reason)) + "}" +
                    ",\"operator_released\":" + std::to_string(operator_released);
  if (reasons) {
    out += ",\"failure_reasons\":[";
    for (std::size_t i = 0; i < reasons->size(); ++i) {
      const auto& r = (*reasons)[i];
      out += (i ? ",{" : "{");
      out += "\"reason\":" + json_string(r.reason) + ",\"count\":" + std::to_string(r.count) + ",\"example_ids\":[";
      for (std::size_t k = 0; k < r.example_ids.size(); ++k) out += (k ? "," : "") + json_string(r.example_ids[k]);
      out += "]}";
    }
    out += "]";
  }
  return out;
}

std::string with_members(std::string object, const std::string& members) {
  const auto close = object.rfind('}');
  if (close == std::string::npos) return object;
  object.insert(close, members);
  return object;
}

namespace {
// ,"tokens":{"input":N,"output":N,"limit_per_minute":N|null,"cost":X|null}: an LLM API's.
std::string tokens_members_json(const http_figures& h) {
  if (!h.metered() && h.token_limit_per_minute.load(std::memory_order_relaxed) <= 0) return {};
  const double limit = h.token_limit_per_minute.load(std::memory_order_relaxed);
  return ",\"tokens\":{\"input\":" + std::to_string(h.tokens_in.load(std::memory_order_relaxed)) +
         ",\"output\":" + std::to_string(h.tokens_out.load(std::memory_order_relaxed)) +
         ",\"limit_per_minute\":" + (limit > 0 ? std::to_string(static_cast<long long>(limit)) : std::string("null")) +
         ",\"cost\":" + (h.priced() ? http_figures::cost_text(h.cost()) : std::string("null")) + "}";
}
}  // namespace

namespace {
// {"count":N,"mean_ms":X}: how many and how long on average (ms, three decimals).
template <std::size_t N>
std::string timing_json(const histogram<N>& h) {
  const auto n = h.count();
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.3f", n ? h.sum() * 1000.0 / static_cast<double>(n) : 0.0);
  return "{\"count\":" + std::to_string(n) + ",\"mean_ms\":" + mean + "}";
}
}  // namespace

std::string http_members_json(const http_figures& h) {
  return ",\"http\":{\"requests\":" + std::to_string(h.exchanges()) +
         ",\"no_answer\":" + std::to_string(h.responses[0].load(std::memory_order_relaxed)) +
         ",\"throttled\":" + std::to_string(h.throttled.load(std::memory_order_relaxed)) +
         ",\"api_stops\":" + std::to_string(h.api_stops.load(std::memory_order_relaxed)) +
         ",\"dropped_handshakes\":" + std::to_string(h.dropped_handshakes.load(std::memory_order_relaxed)) +
         ",\"handshakes\":" + timing_json(h.handshake_s) + ",\"connection_waits\":" + timing_json(h.connection_wait_s) +
         ",\"limits\":" + h.limits.json() + tokens_members_json(h) + "}";
}

}  // namespace dibs::http
