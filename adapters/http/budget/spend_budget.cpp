#include "spend_budget.hpp"

#include <dibs/log.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

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
  if (micro == 0) return std::nullopt;  // less than a millionth of a dollar: no budget at all
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

spend_ticket& spend_ticket::operator=(spend_ticket&& o) noexcept {
  if (this != &o) {
    drop();
    budget_ = std::exchange(o.budget_, nullptr);
    key_ = std::move(o.key_);
    taken_ = o.taken_;
    sent_ = o.sent_;
  }
  return *this;
}

void spend_ticket::drop() {
  if (!budget_) return;
  settle(sent_ ? std::nullopt : std::optional<std::uint64_t>(0));  // cancelled: unsent, all of it back
}

void spend_ticket::settle(std::optional<std::uint64_t> cost) {
  auto* b = std::exchange(budget_, nullptr);
  if (!b) return;
  if (!cost) b->end_ticket(key_, 0, 0);
  else if (*cost <= taken_) b->end_ticket(key_, taken_ - *cost, 0);
  else b->end_ticket(key_, 0, *cost - taken_);
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

void spend_budget::on_spent(std::function<void()> tell) {
  std::lock_guard lock(mutex_);
  on_spent_ = std::move(tell);
}

std::string spend_budget::key() const {
  std::lock_guard lock(mutex_);
  return key_;
}

spend_budget::took spend_budget::take_blocking(std::uint64_t micro) {
  took out;
  {
    std::lock_guard lock(mutex_);
    out.key = key_now();
  }
  try {
    const auto t = store_->take(out.key, micro, limit_.calls);
    if (t.granted < micro) {
      // Not all of it: a part would let the call go past the budget. What was granted goes back.
      if (t.granted > 0) store_->give_back(out.key, t.granted);
      std::lock_guard lock(mutex_);
      used_by_all_ = t.used - t.granted;
      return out;
    }
    std::lock_guard lock(mutex_);
    used_by_all_ = t.used;
    out.granted = true;
    in_flight_.fetch_add(1, std::memory_order_acq_rel);
  } catch (const std::exception& e) {
    // The store can't be asked: no call goes out unpaid for (the item goes back, as when spent),
    // and for a second nothing more is claimed (budget_gate), so the items are not claimed and
    // given back in a loop.
    out_of_reach_until_.store((std::chrono::steady_clock::now() + std::chrono::seconds(1)).time_since_epoch().count(),
                              std::memory_order_release);
    log::warn(what_, ": the store could not be asked for the budget (", e.what(), "): the call is not sent");
    out.out_of_reach = true;
  }
  return out;
}

awaitable<std::optional<spend_ticket>> spend_budget::take(std::uint64_t micro) {
  for (;;) {
    const auto settled_before = settled_.load(std::memory_order_acquire);
    auto call = [this, micro] { return take_blocking(micro); };  // named: no lambda temporaries at a co_await (g++ 12)
    auto t = co_await offload(pool_, std::move(call));
    if (t.granted) co_return spend_ticket(this, std::move(t.key), micro);
    if (t.out_of_reach) co_return std::nullopt;
    // No room. This process's calls in flight hold what they took: most of it comes back with
    // their answers, so the request waits for one to end and asks again; with none in flight,
    // the budget is spent (another process's calls may give some back: its run goes on).
    if (in_flight() == 0) {
      // A call that settled after the store said no (and before this looked) gave room back: ask again.
      if (settled_.load(std::memory_order_acquire) != settled_before) continue;
      std::function<void()> tell;
      {
        std::lock_guard lock(mutex_);
        refused_most_ = micro;
        tell = on_spent_;
      }
      if (!spent_.exchange(true, std::memory_order_acq_rel)) {
        log::info(what_, ": no room for a call of up to ", dollars_text(micro), ": nothing more is claimed");
        if (tell) tell();  // a run that claims nothing more (waiting for an API that is down) stops now
      }
      co_return std::nullopt;
    }
    net::steady_timer timer(co_await net::this_coro::executor);
    while (settled_.load(std::memory_order_acquire) == settled_before && in_flight() > 0) {
      timer.expires_after(std::chrono::milliseconds(20));  // polled: a settle is a counter, no waiter list
      co_await timer.async_wait(net::use_awaitable);
    }
  }
}

void spend_budget::end_ticket(const std::string& key, std::uint64_t back, std::uint64_t more) {
  if (more > 0 && !told_excess_.exchange(true))
    log::warn(what_, ": an answer cost ", dollars_text(more), " more than its request was estimated at most: give the "
              "request a max_tokens to bound what a call can cost");
  // The store's update goes first, the count after: a take that waited for this settle asks the
  // store after the update (both on the budget's one thread, in order).
  net::post(pool_.executor(), [this, key, back, more] {
    try {
      if (back > 0) store_->give_back(key, back);
      if (more > 0) {
        // Taken after the fact, as far as the budget has it: the next calls see it.
        const auto t = store_->take(key, more, limit_.calls);
        std::lock_guard lock(mutex_);
        used_by_all_ = t.used;
      }
    } catch (const std::exception& e) {
      log::warn(what_, ": ", back > 0 ? dollars_text(back) + " not spent could not go back to '"
                                      : dollars_text(more) + " spent beyond an estimate could not be counted in '",
                key, "' (", e.what(), ")");
    }
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    settled_.fetch_add(1, std::memory_order_acq_rel);
  });
}

std::string spend_budget::spent_line() const {
  std::lock_guard lock(mutex_);
  const auto left = limit_.calls > used_by_all_ ? limit_.calls - used_by_all_ : 0;
  return what_ + " spent: " + dollars_text(used_by_all_) + " of " + dollars_text(limit_.calls) + " taken; the next call could cost up to " +
         dollars_text(refused_most_) + ", more than the " + dollars_text(left) + " left (renews " + utc_text(renews_) + ")";
}

}  // namespace dibs::http
