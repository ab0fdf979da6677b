#include <dibs/http/origin_limits.hpp>

#include "limit_signals.hpp"
#include "straggler_watch.hpp"

#include "engine/src/json_text.hpp"
#include <dibs/setting_error.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace dibs::http {

origin_limit::origin_limit(std::string origin, adaptive_settings s, clock::time_point now)
    : origin_(std::move(origin)),
      limit_state_(s, now),
      pace_state_(pace_settings{}, now),
      limit_(limit_state_.limit()),
      ceiling_(limit_state_.max()),
      answers_since_(now) {}

void origin_limit::started(std::size_t waiting) {
  const auto in_flight = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  // Requests waiting for a connection are not in flight for the limit's demand, and while any
  // waits, neither are those waiting for a permit (connection_waiting).
  const auto for_connections = std::min(connection_waits_.load(std::memory_order_relaxed), in_flight);
  const auto opening = connection_openings_.load(std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  limit_state_.started(in_flight - for_connections,
                       for_connections > 0 ? 0 : waiting + waiting_.load(std::memory_order_relaxed), opening);
}

bool origin_limit::take_turn(clock::time_point now, clock::time_point& at) {
  const double per_s = pace();
  if (per_s <= 0) return true;
  const auto interval = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / per_s));
  auto next = pace_next_.load(std::memory_order_relaxed);
  for (;;) {
    const auto due = clock::time_point(clock::duration(next));
    if (due > now) {
      at = due;
      return false;
    }
    // A turn missed by less than one interval (a timer wakes late) is not lost.
    const auto taken = std::max(due, now - interval) + interval;
    if (pace_next_.compare_exchange_weak(next, taken.time_since_epoch().count(), std::memory_order_relaxed)) return true;
  }
}

origin_limit::decision origin_limit::answered(std::chrono::microseconds first_byte, int status, bool said_when,
                                              clock::time_point now, bool straggler) {
  const auto closed = closed_after_answer_.load(std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  limit_state_.connections_closed(closed);
  ++answers_;
  if (now - answers_since_ >= std::chrono::seconds(5)) {
    answers_per_s_ = static_cast<double>(answers_ - answers_then_) / std::chrono::duration<double>(now - answers_since_).count();
    answers_then_ = answers_;
    answers_since_ = now;
  }
  const bool refused = status == 429 || status == 503;
  // One that said when is heard once its pause is known (paused_by_api).
  if (refused && said_when) return decision{};
  if (refused) return refusal(status, first_byte, now);
  const auto before = limit_state_.limit();
  const auto decreases = limit_state_.decreases();
  pace_state_.counted(sends_.load(std::memory_order_relaxed), paced_waits_.load(std::memory_order_relaxed), now);
  pace_state_.answered(false, now - first_byte, now);
  pace_.store(pace_state_.per_second(), std::memory_order_relaxed);
  bool ended = limit_state_.answered(first_byte, now, straggler);
  typical_us_.store(limit_state_.typical_latency().count(), std::memory_order_relaxed);
  if (const auto sig = overload_signal(status); sig != limit_signal::none) ended = limit_state_.overloaded(sig, now) || ended;
  return ended ? decided(before, decreases, now) : decision{};
}

origin_limit::decision origin_limit::paused_by_api(int status, std::chrono::milliseconds wait,
                                                   std::chrono::microseconds latency, clock::time_point now) {
  if (wait > said_wait_quota) return decision{};
  std::lock_guard lock(mutex_);
  limit_state_.hold_probes(now, std::min<clock::duration>(said_wait_hold * wait, said_wait_hold_most));
  return refusal(status, latency, now, true);
}

// Under the mutex.
origin_limit::decision origin_limit::refusal(int status, std::chrono::microseconds latency, clock::time_point now, bool paused) {
  // A refusal lowers the limit (the API takes fewer at once: a cap on calls at once, a queue
  // that sheds past its length) until it is 1; past that, or once the origin is paced, it moves
  // the pace (one call at a time is still too fast: a rate limit).
  const bool to_pace = pace_state_.per_second() > 0 || limit_state_.limit() <= 1;
  const auto before = limit_state_.limit();
  const auto decreases = limit_state_.decreases();
  if (!to_pace) return limit_state_.refused(overload_signal(status), now, paused) ? decided(before, decreases, now) : decision{};
  pace_state_.counted(sends_.load(std::memory_order_relaxed), paced_waits_.load(std::memory_order_relaxed), now);
  const bool paced = pace_state_.answered(true, now - latency, now);
  pace_.store(pace_state_.per_second(), std::memory_order_relaxed);
  return paced ? paced_down(status, now) : decision{};
}

// Under the mutex.
origin_limit::decision origin_limit::paced_down(int status, clock::time_point now) {
  requests_scarce_.store(true, std::memory_order_relaxed);
  decision d;
  d.changed = true;
  d.before = d.after = limit_state_.limit();
  const auto per_s = static_cast<long long>(pace_state_.per_second());
  d.detail = "pace " + std::to_string(per_s) + "/s (HTTP " + std::to_string(status) + ": the API limits its rate)";
  if (advised_at_ == clock::time_point{} || now - advised_at_ >= std::chrono::minutes(1)) {
    advised_at_ = now;
    d.advice = pace_advice(status, origin_);
  }
  return d;
}

origin_limit::decision origin_limit::overloaded(limit_signal why, clock::time_point now, clock::time_point since) {
  std::lock_guard lock(mutex_);
  const auto before = limit_state_.limit();
  const auto decreases = limit_state_.decreases();
  const bool ended = limit_state_.overloaded(why, now, since);
  typical_us_.store(limit_state_.typical_latency().count(), std::memory_order_relaxed);
  return ended ? decided(before, decreases, now) : decision{};
}

void origin_limit::first_request_answered(clock::time_point opened_at, bool late) {
  std::lock_guard lock(mutex_);
  limit_state_.new_connection_answered(opened_at);
  if (late) return;  // counted when found late
  ++first_served_;
  age_first_requests(first_served_, first_late_);
}

void origin_limit::first_request_late() {
  std::lock_guard lock(mutex_);
  ++first_late_;
  age_first_requests(first_served_, first_late_);
}

bool origin_limit::takes_no_more_connections() const {
  std::lock_guard lock(mutex_);
  return unserved_locked();
}

bool origin_limit::unserved_locked() const {
  const auto closed = closed_after_answer_.load(std::memory_order_relaxed);
  return unserved_connection(answers_, answers_ - std::min(answers_, closed), first_late_, first_served_);
}

std::size_t origin_limit::bound_connections() {
  std::lock_guard lock(mutex_);
  const auto cap = connections_to_keep(unserved_locked(), connection_cap_.load(std::memory_order_relaxed),
                                       served_open_.load(std::memory_order_relaxed));
  connection_cap_.store(cap, std::memory_order_relaxed);
  return cap;
}

origin_limit::decision origin_limit::connections_unserved(clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto before = limit_state_.limit();
  const auto decreases = limit_state_.decreases();
  return limit_state_.connections_unserved(now) ? decided(before, decreases, now) : decision{};
}

origin_limit::decision origin_limit::set_max(double max) {
  std::lock_guard lock(mutex_);
  const auto before = limit_state_.limit();
  const auto decreases = limit_state_.decreases();
  limit_state_.set_max(max);
  ceiling_.store(limit_state_.max(), std::memory_order_relaxed);
  return decided(before, decreases, clock::now());
}

// Under the mutex.
origin_limit::decision origin_limit::decided(std::size_t before, std::uint64_t decreases_before, clock::time_point now) {
  decision d;
  d.before = before;
  d.after = limit_state_.limit();
  d.changed = d.after != before;
  limit_.store(d.after, std::memory_order_relaxed);
  if (!d.changed) return d;
  const bool down = limit_state_.decreases() != decreases_before;
  d.detail = "concurrency limit " + std::to_string(before) + " -> " + std::to_string(d.after) + " (latency " +
             std::to_string(limit_state_.recent_latency().count()) + " us, fastest " +
             std::to_string(limit_state_.min_latency().count()) + " us" + (limit_state_.slow_start() ? ", slow start" : "") +
             (down ? std::string(", down: ") + to_string(limit_state_.last_decrease()) : std::string()) + ")";
  if (!down) return d;
  if (says_requests_scarce(limit_state_.last_decrease())) requests_scarce_.store(true, std::memory_order_relaxed);
  auto advice = overload_advice(limit_state_.last_decrease(), origin_, d.after, answers_per_s_);
  if (!advice.empty() && (advised_at_ == clock::time_point{} || now - advised_at_ >= std::chrono::minutes(1))) {
    advised_at_ = now;
    d.advice = std::move(advice);
  }
  return d;
}

void origin_limit::client_delay(std::chrono::microseconds d) {
  std::lock_guard lock(mutex_);
  // The largest of the shards' reports, each older one fading by a tenth per report.
  delay_us_ = std::max(static_cast<double>(d.count()), delay_us_ * 0.9);
  limit_state_.client_delay(std::chrono::microseconds(static_cast<std::int64_t>(delay_us_)));
}

void origin_limit::shard_gone(std::size_t index) {
  if (index < 64) gone_.fetch_or(std::uint64_t{1} << index, std::memory_order_relaxed);
}

origin_limit::calling_place origin_limit::place_of(std::size_t index, std::size_t shards) const {
  shards = std::max<std::size_t>(1, shards);
  const auto gone = gone_.load(std::memory_order_relaxed);
  const auto below = [gone](std::size_t n) {  // gone among the shards under index n
    return n >= 64 ? std::popcount(gone) : std::popcount(gone & ((std::uint64_t{1} << n) - 1));
  };
  calling_place p;
  const auto gone_of_all = static_cast<std::size_t>(below(std::min<std::size_t>(shards, 64)));
  p.calling = std::max<std::size_t>(1, shards - std::min(gone_of_all, shards - 1));
  p.rank = std::min(index - static_cast<std::size_t>(below(std::min<std::size_t>(index, 64))), p.calling - 1);
  return p;
}

limit_view origin_limit::view() const {
  std::lock_guard lock(mutex_);
  const auto& l = limit_state_;
  limit_view v;
  v.limit = l.limit();
  v.ceiling = static_cast<std::size_t>(l.max());
  v.in_flight = in_flight_.load(std::memory_order_relaxed);
  v.waiting = waiting_.load(std::memory_order_relaxed);
  v.stragglers = stragglers_.load(std::memory_order_relaxed);
  v.lowest = l.lowest();
  v.highest = l.highest();
  v.min_latency = l.min_latency();
  v.recent_latency = l.recent_latency();
  v.last_decrease = l.last_decrease();
  v.decreases = l.decreases();
  v.slow_start = l.slow_start();
  v.pace_per_s = pace_state_.per_second();
  v.pace_lowest = pace_state_.lowest();
  v.pace_highest = pace_state_.highest();
  v.pace_decreases = pace_state_.decreases();
  return v;
}

std::shared_ptr<origin_limit> origin_limits::get(const std::string& origin, const adaptive_settings& s) {
  std::lock_guard lock(mutex_);
  auto& l = by_origin_[origin];
  if (!l) l = std::make_shared<origin_limit>(origin, s);
  return l;
}

std::vector<std::pair<std::string, limit_view>> origin_limits::totals() const {
  std::vector<std::shared_ptr<origin_limit>> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [origin, l] : by_origin_) all.push_back(l);
  }
  std::vector<std::pair<std::string, limit_view>> out;
  for (const auto& l : all) out.emplace_back(l->origin(), l->view());
  return out;
}

void origin_limits::prometheus(prometheus_writer& w) const {
  const auto all = totals();
  if (all.empty()) return;
  const auto each = [&](const char* name, const char* type, const char* help, auto value) {
    w.metric(name, type, help);
    for (const auto& [origin, v] : all) {
      // Appended, not added up: g++ 12 warns (-Warray-bounds) on a chain of + after a temporary.
      std::string sample = name;
      sample.append("{origin=\"").append(prometheus_writer::escape(origin)).append("\"}");
      w.sample(sample, value(v));
    }
  };
  each("dibs_api_concurrency_limit", "gauge", "Requests the adaptive limit allows in flight to the API now.",
       [](const limit_view& v) { return static_cast<double>(v.limit); });
  const std::string ceiling_help = "The most the adaptive limit may reach (" + setting_name("concurrency") + ").";
  each("dibs_api_concurrency_ceiling", "gauge", ceiling_help.c_str(),
       [](const limit_view& v) { return static_cast<double>(v.ceiling); });
  each("dibs_api_requests_in_flight", "gauge", "Requests in flight to the API.",
       [](const limit_view& v) { return static_cast<double>(v.in_flight); });
  each("dibs_api_requests_straggling", "gauge",
       "Requests in flight to the API far later than its usual answer, no longer counted against the limit.",
       [](const limit_view& v) { return static_cast<double>(v.stragglers); });
  each("dibs_api_latency_min_seconds", "gauge", "The fastest answer's time to first byte.",
       [](const limit_view& v) { return std::chrono::duration<double>(v.min_latency).count(); });
  each("dibs_api_latency_recent_seconds", "gauge", "The time to first byte of the last round trip (its lower quartile).",
       [](const limit_view& v) { return std::chrono::duration<double>(v.recent_latency).count(); });
  each("dibs_api_concurrency_decreases_total", "counter", "Times the adaptive limit went down.",
       [](const limit_view& v) { return static_cast<double>(v.decreases); });
  each("dibs_api_pace_per_second", "gauge",
       "Requests per second the pace allows the API (found from its 429/503 refusals); 0 while it refused none.",
       [](const limit_view& v) { return v.pace_per_s; });
  each("dibs_api_pace_decreases_total", "counter", "Times the pace went down (a 429 or 503 from the API).",
       [](const limit_view& v) { return static_cast<double>(v.pace_decreases); });
  w.metric("dibs_api_concurrency_last_decrease", "gauge", "Why the adaptive limit last went down (1 for the reason).");
  for (const auto& [origin, v] : all)
    if (v.last_decrease != limit_signal::none) {
      std::string sample = "dibs_api_concurrency_last_decrease{origin=\"";
      sample.append(prometheus_writer::escape(origin)).append("\",reason=\"");
      sample.append(prometheus_writer::escape(to_string(v.last_decrease))).append("\"}");
      w.sample(sample, 1);
    }
}

std::string origin_limits::json() const {
  std::string out = "[";
  for (const auto& [origin, v] : totals()) {
    if (out.size() > 1) out += ',';
    out += "{\"origin\":" + json_string(origin) + ",\"limit\":" + std::to_string(v.limit) +
           ",\"ceiling\":" + std::to_string(v.ceiling) + ",\"in_flight\":" + std::to_string(v.in_flight) +
           ",\"stragglers\":" + std::to_string(v.stragglers) + ",\"waiting\":" + std::to_string(v.waiting) + ",\"lowest\":" + std::to_string(v.lowest) +
           ",\"highest\":" + std::to_string(v.highest) +
           ",\"min_latency_ms\":" + prometheus_writer::number(std::chrono::duration<double, std::milli>(v.min_latency).count()) +
           ",\"recent_latency_ms\":" + prometheus_writer::number(std::chrono::duration<double, std::milli>(v.recent_latency).count()) +
           ",\"decreases\":" + std::to_string(v.decreases) +
           ",\"last_decrease\":" + json_string(to_string(v.last_decrease)) +
           ",\"slow_start\":" + (v.slow_start ? "true" : "false") +
           ",\"pace_per_s\":" + prometheus_writer::number(std::round(v.pace_per_s * 10) / 10) +
           ",\"pace_lowest_per_s\":" + prometheus_writer::number(std::round(v.pace_lowest * 10) / 10) +
           ",\"pace_highest_per_s\":" + prometheus_writer::number(std::round(v.pace_highest * 10) / 10) + "}";
  }
  return out + "]";
}

}  // namespace dibs::http
