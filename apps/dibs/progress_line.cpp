#include "progress_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace dibs::cli {

std::string eta_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  return buf;
}

namespace {
std::string num(std::uint64_t v) { return std::to_string(v); }

// Retries waiting can't outnumber what is left (the counter is an estimate: see counters.hpp).
// With nothing in flight after retries, whatever is left is waiting out a backoff (or the lease
// grace before it can be claimed again) too.
std::uint64_t waiting_retries(const progress_figures& f, std::uint64_t left) {
  if (f.in_flight == 0 && f.retries > 0) return left;
  const auto w = f.retries_waiting > 0 ? static_cast<std::uint64_t>(f.retries_waiting) : 0;
  return std::min(w, left);
}
}  // namespace

std::string progress_line(const progress_figures& f, std::size_t width) {
  // (text, importance): lower importance goes first when the line must shrink.
  std::vector<std::pair<std::string, int>> parts;
  if (f.paused) parts.push_back({"PAUSED", 9});
  if (f.api_down) parts.push_back({"API DOWN: probing, " + num(f.waiting_for_api) + " waiting", 9});
  parts.push_back({"done " + num(f.done) + (f.total > 0 ? "/" + num(f.total) : ""), 8});
  if (f.no_data > 0) parts.push_back({"no data " + num(f.no_data), 7});
  parts.push_back({"failed " + num(f.failed), 7});
  parts.push_back({std::to_string(static_cast<long long>(std::llround(f.rate))) + " docs/s", 4});
  if (f.total > 0) {
    const auto finished = f.done + f.no_data + f.failed;
    const auto left = finished < f.total ? f.total - finished : 0;
    const auto retrying = waiting_retries(f, left);
    if (left > 0) {
      // Only retries waiting out their backoff left: their time is the backoff's, not the rate's.
      if (retrying > 0 && retrying >= left) parts.push_back({"retrying " + num(retrying), 6});
      const bool unknown = f.paused || f.api_down || f.rate <= 0 || (retrying > 0 && retrying >= left);
      parts.push_back({"ETA " + (unknown ? std::string("?") : eta_text(left / f.rate)), 5});
    }
  }
  parts.push_back({"in flight " + std::to_string(f.in_flight) +
                       (f.api_limit >= 0 ? " (API limit " + std::to_string(f.api_limit) + ")" : std::string()),
                   3});
  parts.push_back({"retries " + num(f.retries), 2});
  if (const auto all = f.answer_calls + f.answers_shared; all > 0)  // the least needed: dropped first
    parts.push_back({"reused " + std::to_string(f.answers_shared * 100 / all) + "%", 1});

  auto joined = [&] {
    std::string line;
    for (const auto& [text, importance] : parts) {
      if (importance < 0) continue;
      line += (line.empty() ? "" : "  ") + text;
    }
    return line;
  };
  std::string line = joined();
  while (width > 0 && line.size() > width) {
    // Drop the least important part still shown, unless only the ones that must stay are left.
    auto least = parts.end();
    for (auto it = parts.begin(); it != parts.end(); ++it)
      if (it->second >= 0 && it->second < 8 && (least == parts.end() || it->second < least->second)) least = it;
    if (least == parts.end()) {
      line.resize(width);
      break;
    }
    least->second = -1;
    line = joined();
  }
  return line;
}

void rate_window::add(std::chrono::steady_clock::time_point at, std::uint64_t finished) {
  samples_.emplace_back(at, finished);
  // Keep one sample at or before the window's start, so the rate always spans the whole window.
  while (samples_.size() > 2 && samples_[1].first <= at - window_) samples_.pop_front();
}

double rate_window::per_second() const {
  if (samples_.size() < 2) return 0;
  const auto& [t0, n0] = samples_.front();
  const auto& [t1, n1] = samples_.back();
  const double dt = std::chrono::duration<double>(t1 - t0).count();
  return dt > 0 && n1 >= n0 ? static_cast<double>(n1 - n0) / dt : 0;
}

std::size_t terminal_width() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* cols = std::getenv("COLUMNS")) {
    const long n = std::atol(cols);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  return 80;
}

}  // namespace dibs::cli
