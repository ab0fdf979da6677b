#include "burst_order.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dibs::http {

namespace {
constexpr std::int64_t together_least_us = 5'000;

// Each value's rank (1-based), ties given their average rank.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double average = (static_cast<double>(i + j) / 2) + 1;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = average;
    i = j + 1;
  }
  return r;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return 0;  // all sent at once, or all alike: no order to read
  return sxy / std::sqrt(sxx * syy);
}
}  // namespace

std::optional<double> queued_in_send_order(std::vector<burst_answer> answers) {
  if (answers.size() < 8) return std::nullopt;
  // Only the requests that left together: one sent later (its connection waited, past a listen
  // backlog's overflow) meets a queue of its own. Sent 27 ms after the others to a server serving
  // one at a time, it was answered second, and its rank alone took the correlation from 1 to 0.33.
  // Together: within half the fastest answer's latency of the first, 5 ms at least (new
  // connections' handshakes spread a burst's sends over a few ms, more than half of a fast
  // server's 2 ms).
  const auto first =
      std::min_element(answers.begin(), answers.end(), [](const auto& a, const auto& b) { return a.sent_us < b.sent_us; })->sent_us;
  const auto fastest_us =
      std::min_element(answers.begin(), answers.end(), [](const auto& a, const auto& b) { return a.latency_us < b.latency_us; })
          ->latency_us;
  const std::int64_t together_us = std::max<std::int64_t>(fastest_us / 2, together_least_us);
  std::erase_if(answers, [&](const burst_answer& a) { return a.sent_us - first > together_us; });
  if (answers.size() < 7) return std::nullopt;
  std::vector<double> sent, latency;
  for (const auto& a : answers) {
    sent.push_back(static_cast<double>(a.sent_us));
    latency.push_back(static_cast<double>(a.latency_us));
  }
  if (correlation(ranks(sent), ranks(latency)) < 0.8) return std::nullopt;
  std::sort(latency.begin(), latency.end());
  const double fastest = std::max(latency.front(), 1.0);
  if (latency.back() < 2 * fastest) return std::nullopt;
  const double median = latency[(latency.size() - 1) / 2];
  return std::clamp(2 * fastest / median, 1.0 / 8, 0.9);
}

}  // namespace dibs::http
