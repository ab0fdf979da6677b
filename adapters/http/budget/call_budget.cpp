#include "call_budget.hpp"

#include <dibs/log.hpp>

#include <algorithm>

namespace dibs::http {

call_budget::call_budget(budget_limit limit, std::string what, std::shared_ptr<budget_store> store, std::string origin,
                         clock_fn clock)
    : limit_(limit),
      what_(std::move(what)),
      store_(std::move(store)),
      origin_(std::move(origin)),
      clock_(clock ? std::move(clock) : clock_fn([] { return std::chrono::system_clock::now(); })),
      book_(store_ ? 0 : limit.calls) {
  const auto now = clock_();
  renews_ = renews_at(limit.span, now);
  key_ = origin_ + " " + period_name(limit.span, now);
  if (store_) pool_ = std::make_unique<offload_pool>(1);
}

bool call_budget::period_over() const {
  return store_ && limit_.span != budget_span::run && clock_() >= renews_;
}

std::optional<std::pair<std::string, std::uint64_t>> call_budget::roll_period() {
  if (!period_over() || closed_) return std::nullopt;
  const auto now = clock_();
  std::pair<std::string, std::uint64_t> old{key_, book_.unspent()};
  book_.new_period();
  used_by_all_ = 0;
  spent_.store(false, std::memory_order_release);
  renews_ = renews_at(limit_.span, now);
  key_ = origin_ + " " + period_name(limit_.span, now);
  log::info(what_, ": a new period, ", period_name(limit_.span, now), ": its budget is taken from now on (",
            book_.reserved(), " item(s) claimed before it are held in it)");
  return old;
}

void call_budget::give_back_old(const std::pair<std::string, std::uint64_t>& old) {
  if (old.second == 0) return;
  try {
    store_->give_back(old.first, old.second);
  } catch (const std::exception& e) {
    log::warn(what_, ": ", old.second, " calls taken and not made could not go back to '", old.first, "' (", e.what(),
              ")");
  }
}

std::chrono::system_clock::time_point call_budget::renews() const {
  std::lock_guard lock(mutex_);
  return renews_;
}

std::string call_budget::key() const {
  std::lock_guard lock(mutex_);
  return key_;
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

call_budget::reservation_plan call_budget::plan_reservation(std::uint64_t want) {
  std::lock_guard lock(mutex_);
  reservation_plan p;
  p.old = roll_period();
  p.shortfall = store_ && !closed_ ? book_.shortfall(want) : 0;
  p.key = key_;
  return p;
}

awaitable<std::uint64_t> call_budget::reserve(std::uint64_t want) {
  auto plan = plan_reservation(want);
  if (plan.old) co_await offload(*pool_, [this, &plan] { give_back_old(*plan.old); });
  if (plan.shortfall == 0) co_return after_take(want, nullptr, false);
  budget_take took;
  bool failed = false;
  try {
    took = co_await offload(*pool_, [this, &plan] { return store_->take(plan.key, plan.shortfall, limit_.calls); });
  } catch (const std::exception& e) {
    failed = true;
    log::warn(what_, ": the store's budget can't be read now (", e.what(), "); nothing is claimed until it can");
  }
  co_return after_take(want, failed ? nullptr : &took, failed);
}

std::uint64_t call_budget::reserve_blocking(std::uint64_t want) {
  const auto plan = plan_reservation(want);
  if (plan.old) give_back_old(*plan.old);
  if (plan.shortfall == 0) return after_take(want, nullptr, false);
  const auto took = store_->take(plan.key, plan.shortfall, limit_.calls);  // its error is the caller's
  return after_take(want, &took, false);
}

void call_budget::ended(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  book_.ended(n);
}

bool call_budget::batch_calls(const std::vector<std::string>& item_keys) {
  std::lock_guard lock(mutex_);
  if (period_over()) return false;
  std::size_t fresh = 0;
  for (const auto& k : item_keys) fresh += calling_.count(k) ? 0 : 1;
  if (!book_.call(fresh > 0)) return false;
  // The one call made every fresh row's first call: their reservations, which stood for those
  // calls, end now (their rows ending later gives back nothing). A further call of theirs (a half
  // of a batch refused whole) needs room of its own, as any further call does; held on, the
  // reservations left a tight budget no room for the halves, and the rows went back to be
  // claimed and refused again.
  for (const auto& k : item_keys) calling_.try_emplace(k, true);
  book_.ended(fresh);
  return true;
}

void call_budget::items_ended(const std::vector<std::string>& item_keys) {
  std::lock_guard lock(mutex_);
  std::size_t reserved = 0;
  for (const auto& k : item_keys) {
    const auto it = calling_.find(k);
    reserved += it != calling_.end() && it->second ? 0 : 1;
    if (it != calling_.end()) calling_.erase(it);
  }
  book_.ended(reserved);
}

bool call_budget::item_calls(const std::string& item_key) {
  std::lock_guard lock(mutex_);
  // A new period began: its budget is taken by the next claim (a store call, never made on the
  // shard that sends); until then nothing is sent. The item goes back and is claimed again.
  if (period_over()) return false;
  const bool first = !calling_.count(item_key);
  if (!book_.call(first)) return false;
  if (first) calling_.emplace(item_key, false);
  return true;
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
  return line + "; it renews " + utc_text(renews());
}

void call_budget::close() {
  std::uint64_t back = 0;
  std::string key;
  {
    std::lock_guard lock(mutex_);
    if (closed_ || !store_) return;
    closed_ = true;
    key = key_;
    back = book_.unspent();
    used_by_all_ -= std::min(back, used_by_all_);  // what every process took, these given back
  }
  if (back == 0) return;
  try {
    store_->give_back(key, back);
  } catch (const std::exception& e) {
    log::warn(what_, ": ", back, " calls taken and not made could not go back to the store's budget (", e.what(),
              "); they count as spent until it renews");
  }
}

}  // namespace dibs::http
