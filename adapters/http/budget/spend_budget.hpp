// A budget of money for an API metered in tokens: `budget 50USD/day` (or /month), kept in the
// store for every process as a call budget is (budget_store.hpp: dibs_budget), in millionths of a
// dollar, under the API's origin, "USD" and the period ("http://api:80 USD day 2026-11-29").
//
// A request takes, before it goes, the most it can cost: its prompt's estimate at the input price
// and its max_tokens (the estimate's output part) at the output price; its answer gives back what
// its usage did not cost, to the period it was taken from. A request the store has no room for
// waits while this process has calls in flight (their answers give most of what they took back),
// and is not sent once none is left in flight and there is still no room: its item goes back, no
// attempt spent, and the run stops claiming (spent()). So the money spent never passes the budget
// as long as an answer never costs more than its request could: one that did (a body without
// max_tokens) has its excess taken after the fact, as far as the budget has it. Each take and
// give-back is one atomic update of the store's record on a thread of its own: exact across
// processes, one round trip a call (an LLM call takes hundreds of milliseconds).
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
#include <utility>

namespace dibs::http {

// "50USD/day", "50 USD/month", "$50/day", "12.50USD/mo": the budget in millionths of a dollar;
// nullopt otherwise (a call budget, N/day, or no budget).
std::optional<budget_limit> parse_money_budget(const std::string& text);
// Whether a budget record's key is a budget in money's ("http://api:80 USD day 2026-11-29").
bool money_key(const std::string& key);
// Millionths of a dollar as "$12.50", "$0.001234".
std::string dollars_text(std::uint64_t micro);

class spend_budget;

// What one request took from a budget, under the period's key it was taken in. Settled by its
// answer; dropped unsettled, all of it goes back, unless its request was sent (then it stands:
// the API may have charged it).
class spend_ticket {
 public:
  spend_ticket() = default;
  spend_ticket(spend_budget* b, std::string key, std::uint64_t taken) : budget_(b), key_(std::move(key)), taken_(taken) {}
  spend_ticket(spend_ticket&& o) noexcept
      : budget_(std::exchange(o.budget_, nullptr)), key_(std::move(o.key_)), taken_(o.taken_), sent_(o.sent_) {}
  spend_ticket& operator=(spend_ticket&& o) noexcept;
  ~spend_ticket() { drop(); }
  // Its request's first byte is going out: from now on the API may charge it.
  void sent() { sent_ = true; }
  // Its answer said it cost `cost` (nullopt: unknown, it stands as taken).
  void settle(std::optional<std::uint64_t> cost);

 private:
  void drop();
  spend_budget* budget_ = nullptr;
  std::string key_;
  std::uint64_t taken_ = 0;
  bool sent_ = false;
};

class spend_budget {
 public:
  using clock_fn = std::function<std::chrono::system_clock::time_point()>;
  // `limit.calls`: millionths of a dollar. `what`: how a message names it ("budget 50USD/day").
  spend_budget(budget_limit limit, std::string what, std::shared_ptr<budget_store> store, std::string origin, clock_fn clock = {});

  // Takes `micro` (a request's most): a ticket, or nullopt when there is no room and no call of
  // this process in flight to give any back (then spent()), or the store can't be asked (then
  // out_of_reach()).
  awaitable<std::optional<spend_ticket>> take(std::uint64_t micro);

  bool spent() const { return spent_.load(std::memory_order_acquire); }
  // Called (on the thread of the take that found it) once the budget is spent: the run stops
  // claiming even where no claim would ask (a shard waiting for an API that is down). Empty: none.
  void on_spent(std::function<void()> tell);
  // A request whose most is more than the whole budget: it could never be sent.
  bool never_fits(std::uint64_t micro) const { return micro > limit_.calls; }
  std::uint64_t limit() const { return limit_.calls; }
  // The store could not be asked a moment ago (a second): claims wait rather than claim items
  // whose calls could not be paid for.
  bool out_of_reach() const {
    return std::chrono::steady_clock::now().time_since_epoch().count() < out_of_reach_until_.load(std::memory_order_acquire);
  }
  // "budget 50USD/day spent: $49.998 of $50 taken; the next call could cost up to $0.004, more
  // than the $0.002 left (renews 2026-11-30 00:00 UTC)".
  std::string spent_line() const;
  const std::string& what() const { return what_; }
  std::string key() const;
  // Calls of this process holding a ticket (taken, not settled).
  std::uint64_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }

 private:
  friend class spend_ticket;
  struct took {
    bool granted = false;
    bool out_of_reach = false;
    std::string key;
  };
  took take_blocking(std::uint64_t micro);
  // A ticket's end: `back` given back to `key`, or `more` taken after the fact.
  void end_ticket(const std::string& key, std::uint64_t back, std::uint64_t more);
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
  std::uint64_t refused_most_ = 0;  // the call the budget had no room for: its most
  std::function<void()> on_spent_;
  std::atomic<bool> spent_{false};
  std::atomic<std::uint64_t> in_flight_{0};
  std::atomic<std::uint64_t> settled_{0};  // tickets ended so far: a waiting take asks again after one
  std::atomic<bool> told_excess_{false};
  std::atomic<std::chrono::steady_clock::rep> out_of_reach_until_{0};
  offload_pool pool_{1};  // last: its queued give-backs run before the rest goes
};

}  // namespace dibs::http
