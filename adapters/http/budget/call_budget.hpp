// A budget of API calls for a run: `max_calls N` (this run, this process) or `budget N/day`
// and `N/month` (kept in the store for every process: budget_store.hpp). The store's claims go
// through it (budget_gate.hpp): an item is claimed only when its call fits, so once the budget is
// spent nothing more is claimed and no item spends an attempt on a call that can't be made. The
// processor says when a call goes out (called()); answer reuse makes none and costs nothing.
// Thread-safe; the store is called on a thread of its own, never on a shard.
#pragma once

#include "budget_book.hpp"
#include "budget_period.hpp"

#include "engine/src/budget_store.hpp"

#include <dibs/net.hpp>
#include <dibs/offload.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

namespace dibs::http {

// The key of a claimed item under its lease, as call_budget counts its calls.
inline std::string budget_item_key(const std::string& id, std::uint64_t token) {
  return id + '\x1f' + std::to_string(token);
}

class call_budget {
 public:
  using clock_fn = std::function<std::chrono::system_clock::time_point()>;
  // `store`: the budget kept for every process, under `origin` and the period's name (the key
  // "http://api:80 day 2026-11-28"); null: the limit is this run's (max_calls). `what`: how a
  // message names it ("max_calls 500", "budget 100000/day"). `clock`: the UTC clock the
  // periods follow (tests give their own).
  call_budget(budget_limit limit, std::string what, std::shared_ptr<budget_store> store = nullptr, std::string origin = {},
              clock_fn clock = {});
  ~call_budget();
  call_budget(const call_budget&) = delete;
  call_budget& operator=(const call_budget&) = delete;

  // Up to `want` items reserved (the store asked for more calls first when needed); 0 when the
  // budget is spent (spent() then says so) or the store can't be asked now.
  awaitable<std::uint64_t> reserve(std::uint64_t want);
  std::uint64_t reserve_blocking(std::uint64_t want);  // outside the shards (the pre-flight)
  void ended(std::uint64_t n);  // reserved items that were not claimed
  // Claimed items (by `item_key`) that the engine is done with: their reservations end.
  void items_ended(const std::vector<std::string>& item_keys);
  // A claimed item's call is going out (its request's first byte is being sent): its first of
  // the claim is always allowed; a further one only with room left. false: not allowed (the
  // budget has no call for it), and nothing may be sent.
  bool item_calls(const std::string& item_key);
  // A batch's one call for claimed items (by key): allowed as the first call of any of them, else
  // only with room left; false: not allowed, nothing may be sent. The rows it is the first call
  // of give their reservations back at once (one call stood for them all).
  bool batch_calls(const std::vector<std::string>& item_keys);
  void called();                // a call that reserved for itself went out (the pre-flight)
  // The budget had no call left for a claim.
  bool spent() const { return spent_.load(std::memory_order_acquire); }
  // "budget 1000/day spent: 1000 calls of 1000 (renews 2026-11-29 00:00 UTC)".
  std::string spent_line() const;
  // Calls taken and not made go back to the store's budget (at the end of the run).
  void close();

  std::uint64_t limit() const { return limit_.calls; }
  // Calls this process made, and what is left of the budget as this process knows it (the
  // store's count when it was last asked, less what this process spent since).
  std::uint64_t calls() const;
  std::uint64_t left() const;
  const std::string& what() const { return what_; }
  std::chrono::system_clock::time_point renews() const;
  std::string key() const;  // the store's key of the period in force

 private:
  std::uint64_t after_take(std::uint64_t want, const budget_take* took, bool failed);
  // At a period's end (a day's, a month's): the calls held and not made go back to the old
  // period's key (returned: key and count), and the book starts the new period. Under mutex_.
  std::optional<std::pair<std::string, std::uint64_t>> roll_period();
  // A reservation's first step, under the lock: the period rolled if it is over (what the old one
  // holds unspent, to give back), and how many calls to take from the store, under which key.
  struct reservation_plan {
    std::optional<std::pair<std::string, std::uint64_t>> old;
    std::uint64_t shortfall = 0;
    std::string key;
  };
  reservation_plan plan_reservation(std::uint64_t want);
  void give_back_old(const std::pair<std::string, std::uint64_t>& old);
  bool period_over() const;  // under mutex_

  budget_limit limit_;
  std::string what_;
  std::shared_ptr<budget_store> store_;
  std::string origin_;
  clock_fn clock_;
  std::string key_;
  std::chrono::system_clock::time_point renews_;
  mutable std::mutex mutex_;
  budget_book book_;
  // Claimed items that made a call, until they end: whether that call (a batch's) ended their
  // reservation already.
  std::unordered_map<std::string, bool> calling_;
  std::uint64_t used_by_all_ = 0;  // the store's count when last asked
  std::atomic<bool> spent_{false};
  bool closed_ = false;
  std::unique_ptr<offload_pool> pool_;  // with a store: its one thread
};

}  // namespace dibs::http
