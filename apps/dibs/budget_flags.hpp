// The flags that cap the calls a run may make: `--max-calls N` (this run) and `--budget N/day`
// or `N/month` (kept in the store for every process: call_budget.hpp, budget_store.hpp), or its
// money, `--budget 50USD/day` (spend_budget.hpp). The budgets are made here, the store's claims
// gated by them (budget_gate.hpp), and the run's end says when one was spent.
#pragma once

#include "adapters/http/budget/call_budget.hpp"
#include "adapters/http/budget/spend_budget.hpp"

#include <dibs/admin_store.hpp>
#include <dibs/store.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dibs::cli {

struct budget_flags {
  std::uint64_t max_calls = 0;  // 0: none
  std::string budget;           // "" or N/day, N/month, or money: 50USD/day, 50USD/month

  void add_to(CLI::App& cmd, const std::string& group);
  // --max-calls's budget (made once), or none; throws std::invalid_argument naming the flag.
  const std::vector<std::shared_ptr<http::call_budget>>& budgets() const;
  // --budget's, kept in `st` for every process calling `origin` (scheme://host:port): after the
  // store is open, before the processors are made. Throws std::invalid_argument naming the flag
  // when the store keeps none (a file: --max-calls caps its run).
  void keep_in(const std::shared_ptr<admin_store>& st, const std::string& origin);
  // The store the engine claims from: `st` itself, or gated by the budgets; `on_spent` is called
  // when a budget had no call left for a claim.
  std::shared_ptr<store> gate(std::shared_ptr<store> st, std::function<void()> on_spent) const;
  // --budget's in money (none until keep_in made it).
  const std::vector<std::shared_ptr<http::spend_budget>>& spend_budgets() const { return spend_; }
  // The spent budgets' lines ("--max-calls 500 spent: ..."); empty when none was spent.
  std::vector<std::string> spent_lines() const;
  // Calls taken from the store and not made go back (the run's end).
  void close() const;

 private:
  mutable std::vector<std::shared_ptr<http::call_budget>> budgets_;
  std::vector<std::shared_ptr<http::spend_budget>> spend_;
  mutable bool made_ = false;
};

}  // namespace dibs::cli
