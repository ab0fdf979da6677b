// The store as the engine sees it under call budgets (call_budget.hpp): a claim takes only as
// many items as every budget has calls for, reserved before the claim; an item's reservation
// ends when the engine lets it go (let_go: written, given back, failed, its lease lost or left to
// expire), once per claimed item whatever the way. When a budget has no call left for a claim,
// the claim gets nothing and `on_spent` is called (once): the run stops claiming and ends when
// its calls in flight have.
#pragma once

#include "call_budget.hpp"
#include "spend_budget.hpp"

#include <adapters/stores/forwarding_store.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace dibs::http {

class budget_gate final : public forwarding_store<store> {
 public:
  // `spend`: budgets in money (spend_budget.hpp), taken by each request; once one is spent,
  // nothing more is claimed.
  budget_gate(std::shared_ptr<store> inner, std::vector<std::shared_ptr<call_budget>> budgets,
              std::function<void()> on_spent, std::vector<std::shared_ptr<spend_budget>> spend = {});
  ~budget_gate() override;
  budget_gate(const budget_gate&) = delete;
  budget_gate& operator=(const budget_gate&) = delete;

  awaitable<std::vector<job>> claim(claim_request req) override;
  void let_go(const std::vector<lease_ref>& items) override;

 protected:
  store& inner() const override { return *inner_; }

 private:
  void ended(std::size_t n);  // reserved for items the store did not hand over

  std::shared_ptr<store> inner_;
  std::vector<std::shared_ptr<call_budget>> budgets_;
  std::vector<std::shared_ptr<spend_budget>> spend_;
  std::function<void()> on_spent_;
  std::atomic<bool> told_{false};
};

}  // namespace dibs::http
