#include "budget_flags.hpp"

#include "adapters/http/budget/budget_gate.hpp"

#include <dibs/log.hpp>
#include <adapters/stores/record_budget.hpp>

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace dibs::cli {

void budget_flags::add_to(CLI::App& cmd, const std::string& group) {
  cmd.add_option("--max-calls", max_calls,
                 "at most N API calls in this run: then nothing more is claimed, no item spends an attempt, and dibs "
                 "exits with status 4 (answer reuse costs no call; 0: no cap)")
      ->type_name("N")
      ->group(group);
  cmd.add_option("--budget", budget,
                 "at most N API calls a UTC day or month, for every process on the store (kept in its dibs_budget): "
                 "when spent, as --max-calls; status, /metrics and the dashboard show what is left. In money "
                 "(50USD/day, with --price): each call takes the most it can cost before it goes (its prompt and "
                 "max_tokens at the prices) and gives back what its usage did not")
      ->type_name("N/day|N/month|D USD/day")
      ->group(group);
}

const std::vector<std::shared_ptr<http::call_budget>>& budget_flags::budgets() const {
  if (!made_) {
    made_ = true;
    if (!budget.empty() && !http::parse_budget(budget) && !http::parse_money_budget(budget))
      throw std::invalid_argument("--budget '" + budget + "': expected N/day or N/month (calls, like 100000/day), or dollars "
                                  "a day or month (like 50USD/day)");
    if (max_calls > 0)
      budgets_.push_back(std::make_shared<http::call_budget>(http::budget_limit{max_calls, http::budget_span::run},
                                                             "--max-calls " + std::to_string(max_calls)));
  }
  return budgets_;
}

void budget_flags::keep_in(const std::shared_ptr<admin_store>& st, const std::string& origin) {
  budgets();
  if (budget.empty()) return;
  auto kept = open_budget(st);
  if (!kept)
    throw std::invalid_argument("--budget " + budget + ": a file keeps no budget for other runs; --max-calls caps this run");
  if (const auto money = http::parse_money_budget(budget)) {
    spend_.push_back(std::make_shared<http::spend_budget>(*money, "--budget " + budget, std::move(kept), origin));
    log::info("--budget ", budget, ": kept in the store's dibs_budget as '", spend_.back()->key(),
              "' (millionths of a dollar), for every process");
    return;
  }
  const auto limit = *http::parse_budget(budget);
  budgets_.push_back(std::make_shared<http::call_budget>(limit, "--budget " + budget, std::move(kept), origin));
  log::info("--budget ", budget, ": kept in the store's dibs_budget as '", budgets_.back()->key(), "', for every process");
}

std::shared_ptr<store> budget_flags::gate(std::shared_ptr<store> st, std::function<void()> on_spent) const {
  if (budgets().empty() && spend_.empty()) return st;
  return std::make_shared<http::budget_gate>(std::move(st), budgets_, std::move(on_spent), spend_);
}

std::vector<std::string> budget_flags::spent_lines() const {
  std::vector<std::string> out;
  for (const auto& b : budgets_)
    if (b->spent()) out.push_back(b->spent_line());
  for (const auto& b : spend_)
    if (b->spent()) out.push_back(b->spent_line());
  return out;
}

void budget_flags::close() const {
  for (const auto& b : budgets_) b->close();
}

}  // namespace dibs::cli
