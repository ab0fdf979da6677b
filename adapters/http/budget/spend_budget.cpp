#include "spend_budget.hpp"

#include <dibs/log.hpp>

#include <boost/asio/post.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace dibs::http {

std::optional<budget_limit> parse_money_budget(const std::string& text) {
  std::string t;
  for (char c : text)
    if (c != ' ') t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto slash = t.find('/');
  if (slash == std::string::npos) return std::nullopt;
  auto amount = t.substr(0, slash);
  const auto unit = t.substr(slash + 1);
  if (amount.size() > 1 && amount.front() == '$') amount = amount.substr(1);
  else if (amount.size() > 3 && amount.compare(amount.size() - 3, 3, "USD") == 0) amount.resize(amount.size() - 3);
  else return std::nullopt;
  if (amount.empty() || !std::isdigit(static_cast<unsigned char>(amount.front()))) return std::nullopt;
  char* end = nullptr;
  const double dollars = std::strtod(amount.c_str(), &end);
  if (*end != '\0' || !(dollars > 0) || dollars > 1e9) return std::nullopt;
  const auto micro = static_cast<std::uint64_t>(std::llround(dollars * 1e6));
  if (unit == "DAY" || unit == "D") return budget_limit{micro, budget_span::day};
  if (unit == "MONTH" || unit == "MO") return budget_limit{micro, budget_span::month};
  return std::nullopt;
}

bool money_key(const std::string& key) {
  return key.find(" USD day ") != std::string::npos || key.find(" USD month ") != std::string::npos;
}

std::string dollars_text(std::uint64_t micro) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "$%llu.%06llu", static_cast<unsigned long long>(micro / 1'000'000),
                static_cast<unsigned long long>(micro % 1'000'000));
  std::string s = buf;
  while (s.back() == '0' && s.size() > s.find('.') + 3) s.pop_back();  // $12.50, $0.001234
  return s;
}

spend_budget::spend_budget(budget_limit limit, std::string what, std::shared_ptr<budget_store> store, std::string origin,
                           clock_fn clock)
    : limit_(limit),
      what_(std::move(what)),
      store_(std::move(store)),
      origin_(std::move(origin)),
      clock_(clock ? std::move(clock) : clock_fn([] { return std::chrono::system_clock::now(); })) {
  const auto now = clock_();
  renews_ = renews_at(limit_.span, now);
  key_ = origin_ + " USD " + period_name(limit_.span, now);
}

std::string spend_budget::key_now() {
  const auto now = clock_();
  if (now >= renews_) {  // a new day or month: its own record, nothing spent in it yet
    renews_ = renews_at(limit_.span, now);
    key_ = origin_ + " USD " + period_name(limit_.span, now);
    used_by_all_ = 0;
    spent_.store(false, std::memory_order_release);
  }
  return key_;
}

std::string spend_budget::key() const {
  std::lock_guard lock(mutex_);
  return key_;
}

bool spend_budget::take_blocking(std::uint64_t micro) {
  std::string key;
  {
    std::lock_guard lock(mutex_);
    key = key_now();
  }
  try {
    const auto took = store_->take(key, micro, limit_.calls);
    if (took.granted < micro) {
      // Not all of it: a part would let the call go past the budget. What was granted goes back.
      if (took.granted > 0) store_->give_back(key, took.granted);
      std::lock_guard lock(mutex_);
      used_by_all_ = took.used - took.granted;
      if (!spent_.exchange(true, std::memory_order_acq_rel))
        log::info(what_, ": no room for a call of up to ", dollars_text(micro), ": nothing more is claimed");
      return false;
    }
    std::lock_guard lock(mutex_);
    used_by_all_ = took.used;
    spent_here_.fetch_add(micro, std::memory_order_relaxed);
    return true;
  } catch (const std::exception& e) {
    // The store can't be asked: no call goes out unpaid for (the item goes back, as when spent).
    log::warn(what_, ": the store could not be asked for the budget (", e.what(), "): the call is not sent");
    return false;
  }
}

awaitable<bool> spend_budget::take(std::uint64_t micro) {
  auto call = [this, micro] { return take_blocking(micro); };  // named: no lambda temporaries at a co_await (g++ 12)
  co_return co_await offload(pool_, std::move(call));
}

void spend_budget::settle(std::uint64_t taken, std::optional<std::uint64_t> cost) {
  if (!cost) return;
  if (*cost > taken) {
    // The answer used more than its request allowed (a body without max_tokens, an estimate the
    // prompt beat): what it cost beyond is taken after the fact, as far as the budget has it, so
    // the next calls see it; said once.
    const auto excess = *cost - taken;
    spent_here_.fetch_add(excess, std::memory_order_relaxed);
    if (!told_excess_.exchange(true))
      log::warn(what_, ": an answer cost ", dollars_text(*cost), ", more than the ", dollars_text(taken),
                " its request was estimated at most: give the request a max_tokens to bound what a call can cost");
    std::string key;
    {
      std::lock_guard lock(mutex_);
      key = key_;
    }
    net::post(pool_.executor(), [this, key, excess] {
      try {
        const auto took = store_->take(key, excess, limit_.calls);
        std::lock_guard lock(mutex_);
        used_by_all_ = took.used;
        if (took.granted < excess) spent_.store(true, std::memory_order_release);
      } catch (const std::exception& e) {
        log::warn(what_, ": ", dollars_text(excess), " spent beyond an estimate could not be counted in '", key, "' (", e.what(), ")");
      }
    });
    return;
  }
  const auto back = taken - *cost;
  spent_here_.fetch_sub(back, std::memory_order_relaxed);
  if (back == 0) return;
  std::string key;
  {
    std::lock_guard lock(mutex_);
    key = key_;
  }
  net::post(pool_.executor(), [this, key, back] {
    try {
      store_->give_back(key, back);
    } catch (const std::exception& e) {
      log::warn(what_, ": ", dollars_text(back), " not spent could not go back to '", key, "' (", e.what(), ")");
    }
  });
}

std::string spend_budget::spent_line() const {
  std::lock_guard lock(mutex_);
  return what_ + " spent: " + dollars_text(used_by_all_) + " of " + dollars_text(limit_.calls) + " taken (renews " +
         utc_text(renews_) + ")";
}

}  // namespace dibs::http
