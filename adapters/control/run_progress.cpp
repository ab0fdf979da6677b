#include "run_progress.hpp"

#include "control_json.hpp"

namespace dibs::http {

run_progress progress_of(const store_stats& s, double recent_per_s) {
  run_progress p;
  p.recent_per_s = recent_per_s > 0 ? recent_per_s : 0;
  const auto total = s.total();
  const auto open = s.pending + s.leased_live + s.leased_expired;
  if (total > 0) p.percent_done = 100.0 * static_cast<double>(total - open) / static_cast<double>(total);
  if (open == 0) {
    p.eta_s = 0.0;
  } else if (p.recent_per_s > 0) {
    p.eta_s = static_cast<double>(open) / p.recent_per_s;
  }
  return p;
}

std::string progress_members_json(const run_progress& p) {
  auto opt = [](const std::optional<double>& v) { return v ? json_number(*v) : std::string("null"); };
  return ",\"percent_done\":" + opt(p.percent_done) + ",\"eta_s\":" + opt(p.eta_s) +
         ",\"recent_per_s\":" + json_number(p.recent_per_s);
}

}  // namespace dibs::http
