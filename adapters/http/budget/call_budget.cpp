#include "call_budget.hpp"

#include <dibs/log.hpp>

#include <algorithm>

namespace dibs::http {

call_budget::call_budget(budget_limit limit, std::string what, std::shared_ptr<budget_store> store, std::string key)
    : limit_(limit),
      what_(std::move(what)),
      store_(std::move(store)),
      key_(std::move(key)),
      renews_(renews_at(limit.span, std::chrono::system_clock::now())),
      book_(store_ ? 0 : limit.calls) {
  if (store_) pool_ = std::make_unique<offload_pool>(1);
}

call_budget::~call_budget() {
  close();
  if (pool_) pool_->join();
}

std::uint64_t call_budget::after_take(std::uint64_t want, const budget_take* took, bool failed) {
  std::lock_guard lock(mutex_);
  if (took) {
    book_.hold(took->granted);
    used_by_all_ = took->used;
  }
  const auto r = book_.reserve(want);
  // Spent: every call held was made, and the store (asked just now) has none left. Nothing fits
  // while calls held are reserved for items in flight: they may end without one. A store out of
  // reach is no spent budget either: the claim is tried again.
  if (r == 0 && want > 0 && !failed && book_.unspent() == 0 && (!took || took->granted == 0))
    spent_.store(true, std::memory_order_release);
  return r;
}

awaitable<std::uint64_t> call_budget::reserve(std::uint64_t want) {
  std::uint64_t shortfall = 0;
  {
    std::lock_guard lock(mutex_);
    shortfall = store_ && !closed_ ? book_.shortfall(want) : 0;
  }
  if (shortfall == 0) co_return after_take(want, nullptr, false);
  budget_take took;
  bool failed = false;
  try {
    took = co_await offload(*pool_, [this, shortfall] { return store_->take(key_, shortfall, limit_.calls); });
  } catch (const std::exception& e) {
    failed = true;
    log::warn(what_, ": the store's budget can't be read now (", e.what(), "); nothing is claimed until it can");
  }
  co_return after_take(want, failed ? nullptr : &took, failed);
}

std::uint64_t call_budget::reserve_blocking(std::uint64_t want) {
  std::uint64_t shortfall = 0;
  {
    std::lock_guard lock(mutex_);
    shortfall = store_ && !closed_ ? book_.shortfall(want) : 0;
  }
  if (shortfall == 0) return after_take(want, nullptr, false);
  const auto took = store_->take(key_, shortfall, limit_.calls);  // its error is the caller's
  return after_take(want, &took, false);
}

void call_budget::ended(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  book_.ended(n);
}

void call_budget::called() {
  std::lock_guard lock(mutex_);
  book_.called();
}

std::uint64_t call_budget::calls() const {
  std::lock_guard lock(mutex_);
  return book_.spent();
}

std::uint64_t call_budget::left() const {
  std::lock_guard lock(mutex_);
  if (!store_) return book_.unspent();
  const auto unused_by_all = limit_.calls > used_by_all_ ? limit_.calls - used_by_all_ : 0;
  return unused_by_all + (closed_ ? 0 : book_.unspent());
}

std::string call_budget::spent_line() const {
  const auto made = calls();
  std::string line = what_ + " spent: this process made " + std::to_string(made) + " call" + (made == 1 ? "" : "s");
  if (store_) line += ", every process " + std::to_string(limit_.calls - left()) + " of " + std::to_string(limit_.calls);
  if (limit_.span == budget_span::run) return line + "; the next run has " + std::to_string(limit_.calls) + " again";
  return line + "; it renews " + utc_text(renews_);
}

void call_budget::close() {
  std::uint64_t back = 0;
  {
    std::lock_guard lock(mutex_);
    if (closed_ || !store_) return;
    closed_ = true;
    back = book_.unspent();
    used_by_all_ -= std::min(back, used_by_all_);  // what every process took, these given back
  }
  if (back == 0) return;
  try {
    store_->give_back(key_, back);
  } catch (const std::exception& e) {
    log::warn(what_, ": ", back, " calls taken and not made could not go back to the store's budget (", e.what(),
              "); they count as spent until it renews");
  }
}

}  // namespace dibs::http
