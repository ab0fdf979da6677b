// The run's call budgets as /metrics, /status and the dashboard show them: each budget's limit,
// the calls this process made and what is left (call_budget.hpp). Kept in the engine's extra
// figures by the processors that spend them.
#pragma once

#include "call_budget.hpp"

#include <dibs/extra_figures.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dibs::http {

class budget_figures final : public figures_source {
 public:
  void watch(const std::shared_ptr<call_budget>& b);
  // dibs_budget_calls_limit, _made, _left, labelled {budget="..."}.
  void prometheus(prometheus_writer& w) const override;
  // ,"budgets":[{"budget":"max_calls 500","limit":500,"calls":12,"left":488,"spent":false,
  // "renews":"2026-11-29 00:00 UTC"|null}] for /status; "" without budgets.
  std::string status_members() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<call_budget>> budgets_;
};

}  // namespace dibs::http
