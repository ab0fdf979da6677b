// A budget of money for an API metered in tokens: `budget 50USD/day` (or /month), kept in the
// store for every process as a call budget is (budget_store.hpp: dibs_budget), in millionths of a
// dollar, under the API's origin, "USD" and the period ("http://api:80 USD day 2026-11-29").
//
// A request takes, before it goes, the most it can cost: its prompt's estimate at the input price
// and its max_tokens (the estimate's output part) at the output price; its answer gives back what
// its usage did not cost. A request the budget has no room for is not sent (its item goes back,
// no attempt spent) and the run stops claiming (spent()). So the money spent never passes the
// budget, as long as an answer never uses more than its request allowed: one that did (a body
// without max_tokens) has its excess taken after the fact, as far as the budget has it, and the
// run stops when it has not. Each take and give-back is one atomic update of the
// store's record, on a thread of its own: exact across processes, one round trip a call (an LLM
// call takes hundreds of milliseconds).
#pragma once

#include "budget_period.hpp"

#include "engine/src/budget_store.hpp"

#include <dibs/net.hpp>
#include <dibs/offload.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace dibs::http {

// "50USD/day", "50 USD/month", "$50/day", "12.50USD/mo": the budget in millionths of a dollar;
// nullopt otherwise (a call budget, N/day, or no budget).
std::optional<budget_limit> parse_money_budget(const std::string& text);
// Whether a budget record's key is a budget in money's ("http://api:80 USD day 2026-11-29").
bool money_key(const std::string& key);
// Millionths of a dollar as "$12.345678" trimmed ("$12.35" at most 2 decimals when whole cents).
std::string dollars_text(std::uint64_t micro);

class spend_budget {
 public:
  using clock_fn = std::function<std::chrono::system_clock::time_point()>;
  // `limit.calls`: millionths of a dollar. `what`: how a message names it ("budget 50USD/day").
  spend_budget(budget_limit limit, std::string what, std::shared_ptr<budget_store> store, std::string origin, clock_fn clock = {});

  // Takes `micro` (a request's most), false when the budget has not that much left (then spent()).
  awaitable<bool> take(std::uint64_t micro);
  bool take_blocking(std::uint64_t micro);
  // A request that took `taken` cost `cost` (its usage at the prices; nullopt: unknown, so it
  // stands as taken): the difference goes back. Done on the store's thread, in order.
  void settle(std::uint64_t taken, std::optional<std::uint64_t> cost);

  bool spent() const { return spent_.load(std::memory_order_acquire); }
  // "budget 50USD/day spent: $49.998 of $50 (renews 2026-11-30 00:00 UTC)".
  std::string spent_line() const;
  const std::string& what() const { return what_; }
  std::string key() const;
  // What this process took and kept (its calls' cost, as far as their answers said).
  std::uint64_t spent_here() const { return spent_here_.load(std::memory_order_relaxed); }

 private:
  std::string key_now();  // the period's key, rolled when a day or month has passed (under mutex_)

  budget_limit limit_;
  std::string what_;
  std::shared_ptr<budget_store> store_;
  std::string origin_;
  clock_fn clock_;
  mutable std::mutex mutex_;
  std::string key_;
  std::chrono::system_clock::time_point renews_;
  std::uint64_t used_by_all_ = 0;  // the store's count when last asked
  std::atomic<bool> spent_{false};
  std::atomic<std::uint64_t> spent_here_{0};
  std::atomic<bool> told_excess_{false};
  offload_pool pool_{1};  // last: its queued give-backs run before the rest goes
};

}  // namespace dibs::http
