#include "budget_gate.hpp"

#include <algorithm>

namespace dibs::http {

budget_gate::budget_gate(std::shared_ptr<store> inner, std::vector<std::shared_ptr<call_budget>> budgets,
                         std::function<void()> on_spent, std::vector<std::shared_ptr<spend_budget>> spend)
    : inner_(std::move(inner)), budgets_(std::move(budgets)), spend_(std::move(spend)), on_spent_(std::move(on_spent)) {
  // A budget in money is found spent by a request, not by a claim: it says so itself, so a run
  // that claims nothing more (its shards waiting for an API that is down) stops too.
  // (Not counted as told: found before the run starts, by the pre-flight, it stops nothing, and
  // the first claim must still say it.)
  for (auto& b : spend_)
    b->on_spent([this] {
      if (on_spent_) on_spent_();
    });
}

budget_gate::~budget_gate() {
  for (auto& b : spend_) b->on_spent({});
}

void budget_gate::ended(std::size_t n) {
  for (auto& b : budgets_) b->ended(n);
}

awaitable<std::vector<job>> budget_gate::claim(claim_request req) {
  if (std::any_of(spend_.begin(), spend_.end(), [](const auto& b) { return b->spent(); })) {
    if (!told_.exchange(true) && on_spent_) on_spent_();
    co_return std::vector<job>{};
  }
  if (std::any_of(spend_.begin(), spend_.end(), [](const auto& b) { return b->out_of_reach(); })) co_return std::vector<job>{};
  std::uint64_t want = req.max;
  std::vector<std::uint64_t> got;
  for (auto& b : budgets_) {
    got.push_back(co_await b->reserve(want));
    want = std::min(want, got.back());
  }
  // Each budget keeps the reservation of the items every budget has room for.
  for (std::size_t i = 0; i < budgets_.size(); ++i) budgets_[i]->ended(got[i] - want);
  if (want == 0) {
    const bool spent = std::any_of(budgets_.begin(), budgets_.end(), [](const auto& b) { return b->spent(); });
    if (spent && !told_.exchange(true) && on_spent_) on_spent_();
    co_return std::vector<job>{};
  }
  req.max = static_cast<std::size_t>(want);
  std::vector<job> jobs;
  std::exception_ptr failed;
  try {
    jobs = co_await inner_->claim(std::move(req));
  } catch (...) {
    failed = std::current_exception();
  }
  ended(static_cast<std::size_t>(want) - jobs.size());  // reserved for items the store did not hand over
  if (failed) std::rethrow_exception(failed);
  co_return jobs;
}

void budget_gate::let_go(const std::vector<lease_ref>& items) {
  std::vector<std::string> keys;
  keys.reserve(items.size());
  for (const auto& r : items) keys.push_back(budget_item_key(r.id, r.token));
  for (auto& b : budgets_) b->items_ended(keys);
  inner_->let_go(items);
}

}  // namespace dibs::http
