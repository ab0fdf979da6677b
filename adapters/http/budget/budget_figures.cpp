#include "budget_figures.hpp"

#include "engine/src/json_text.hpp"

#include <dibs/prometheus_writer.hpp>

#include <algorithm>

namespace dibs::http {

void budget_figures::watch(const std::shared_ptr<call_budget>& b) {
  std::lock_guard lock(mutex_);
  if (std::find(budgets_.begin(), budgets_.end(), b) == budgets_.end()) budgets_.push_back(b);
}

void budget_figures::prometheus(prometheus_writer& w) const {
  std::lock_guard lock(mutex_);
  if (budgets_.empty()) return;
  struct one {
    const char* name;
    const char* help;
    std::uint64_t (call_budget::*get)() const;
  };
  static constexpr one metrics[] = {
      {"dibs_budget_calls_limit", "API calls the budget allows in its period", &call_budget::limit},
      {"dibs_budget_calls_made", "API calls this process made against the budget", &call_budget::calls},
      {"dibs_budget_calls_left", "API calls left in the budget's period (every process's, as this one last read it)",
       &call_budget::left},
  };
  for (const auto& m : metrics) {
    w.metric(m.name, "gauge", m.help);
    for (const auto& b : budgets_) {
      // A label value's quotes and backslashes escaped, as the exposition format wants them.
      std::string label;
      for (char c : b->what()) label += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
      w.sample(std::string(m.name) + "{budget=\"" + label + "\"}", static_cast<double>(((*b).*m.get)()));
    }
  }
}

std::string budget_figures::status_members() const {
  std::lock_guard lock(mutex_);
  if (budgets_.empty()) return {};
  std::string out = ",\"budgets\":[";
  for (std::size_t i = 0; i < budgets_.size(); ++i) {
    const auto& b = *budgets_[i];
    out += i ? ",{" : "{";
    out += "\"budget\":" + json_string(b.what()) + ",\"limit\":" + std::to_string(b.limit()) +
           ",\"calls\":" + std::to_string(b.calls()) + ",\"left\":" + std::to_string(b.left()) +
           ",\"spent\":" + (b.spent() ? "true" : "false") + ",\"renews\":" +
           (b.renews().time_since_epoch().count() == 0 ? std::string("null") : json_string(utc_text(b.renews()))) + "}";
  }
  return out + "]";
}

}  // namespace dibs::http
