// Items the pre-flight claimed and asked the API for, handed to the engine by its first claims
// before anything else is claimed. The pre-flight's answers are bought: claimed first, their items
// are this run's alone (another process starting at the same moment claims others), and the run
// writes those answers under the pre-flight's leases instead of asking again.
//
// It sits outside the call budgets' gate: each item handed over was reserved by the pre-flight,
// and that reservation ends as the gate's own do (store::let_go, once the engine is done with it).
#pragma once

#include "adapters/stores/forwarding_store.hpp"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace dibs::cli {

class preclaimed_store final : public forwarding_store<store> {
 public:
  explicit preclaimed_store(std::shared_ptr<store> inner) : inner_(std::move(inner)) {}

  // Before the engine starts: these go out first.
  void hand_over(std::vector<job> jobs) {
    std::lock_guard lock(mutex_);
    for (auto& j : jobs) held_.push_back(std::move(j));
  }
  // Those the engine never claimed (it stopped first): the caller gives them back.
  std::vector<job> take_back() {
    std::lock_guard lock(mutex_);
    return std::exchange(held_, {});
  }

  awaitable<std::vector<job>> claim(claim_request req) override {
    std::vector<job> out;
    {
      std::lock_guard lock(mutex_);
      while (!held_.empty() && out.size() < req.max) {
        out.push_back(std::move(held_.front()));
        held_.erase(held_.begin());
      }
    }
    if (!out.empty()) co_return out;
    co_return co_await inner_->claim(std::move(req));
  }

 protected:
  store& inner() const override { return *inner_; }

 private:
  std::shared_ptr<store> inner_;
  std::mutex mutex_;
  std::vector<job> held_;  // a few at most
};

}  // namespace dibs::cli
