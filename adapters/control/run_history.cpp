#include "run_history.hpp"

#include <dibs/prometheus_writer.hpp>

#include <algorithm>

namespace dibs::http {

std::optional<double> bucket_quantile(const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts, double q) {
  std::uint64_t total = 0;
  for (const auto c : counts) total += c;
  if (total == 0 || bounds.empty()) return std::nullopt;
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(total);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto here = counts[i];
    if (here > 0 && static_cast<double>(below + here) >= rank) {
      if (i >= bounds.size()) return bounds.back();  // beyond the last bound: all we can say
      const double lower = i == 0 ? 0.0 : bounds[i - 1];
      const double within = (rank - static_cast<double>(below)) / static_cast<double>(here);
      return lower + (bounds[i] - lower) * std::clamp(within, 0.0, 1.0);
    }
    below += here;
  }
  return bounds.back();
}

namespace {
std::uint64_t since(std::uint64_t now, std::uint64_t before) { return now >= before ? now - before : 0; }
}  // namespace

double run_history::recent_docs_per_s(std::size_t seconds) const {
  const auto n = std::min(seconds, samples_.size());
  if (n == 0) return 0;
  double sum = 0;
  for (auto it = samples_.end() - static_cast<std::ptrdiff_t>(n); it != samples_.end(); ++it) sum += it->docs_per_s;
  return sum / static_cast<double>(n);
}

void run_history::add(const run_reading& r) {
  if (last_ && r.t_s > last_->t_s) {
    const double dt = r.t_s - last_->t_s;
    history_sample s;
    s.t_s = r.t_s;
    s.docs_per_s = static_cast<double>(since(r.outcomes, last_->outcomes)) / dt;
    s.requests_per_s = static_cast<double>(since(r.requests, last_->requests)) / dt;
    s.throttled_per_s = static_cast<double>(since(r.throttled, last_->throttled)) / dt;
    if (r.latency_counts.size() == last_->latency_counts.size()) {
      std::vector<std::uint64_t> interval(r.latency_counts.size());
      for (std::size_t i = 0; i < interval.size(); ++i) interval[i] = since(r.latency_counts[i], last_->latency_counts[i]);
      s.p50_s = bucket_quantile(r.latency_bounds, interval, 0.5);
      s.p99_s = bucket_quantile(r.latency_bounds, interval, 0.99);
    }
    samples_.push_back(s);
    while (samples_.size() > capacity_) samples_.pop_front();
  }
  last_ = r;
}

std::string run_history::json() const {
  auto num = [](double v) { return prometheus_writer::number(v); };
  auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : std::string("null"); };
  std::string out = "{\"interval_s\":1,\"samples\":[";
  const double newest = samples_.empty() ? 0 : samples_.back().t_s;
  bool first = true;
  for (const auto& s : samples_) {
    if (!first) out += ',';
    first = false;
    out += "{\"t\":" + num(s.t_s - newest) + ",\"docs_per_s\":" + num(s.docs_per_s) +
           ",\"requests_per_s\":" + num(s.requests_per_s) + ",\"throttled_per_s\":" + num(s.throttled_per_s) +
           ",\"p50_s\":" + opt(s.p50_s) + ",\"p99_s\":" + opt(s.p99_s) + "}";
  }
  return out + "]}";
}

}  // namespace dibs::http
