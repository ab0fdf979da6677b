// The tokens a minute the user gave (token_rate), held by every process on one store
// (`rate_scope store`), as the request rate is: a schedule of tokens in the store's record (a
// shared_rate whose slots are tokens, saving up a minute of them as the API's bucket holds a
// minute), from which each process takes its requests' tokens before they go. The token_meter of
// each process still holds its own bucket and reads the API's headers; this holds their total to
// the rate however many processes run.
//
// A request takes what it was reserved (its max_tokens and its prompt's estimate); its answer
// says what it used. The difference was taken from the schedule but not spent at the API: it is
// this process's credit, which its next requests spend before taking from the store, so the
// store's schedule follows what the API charges, not what was reserved. An answer that used more
// than was reserved leaves a debt, taken from the schedule with the next request. The credit is
// kept to a minute of the rate and for a minute: tokens never charged are not saved up past what
// the API's bucket holds.
#pragma once

#include "shared_rate.hpp"

#include <dibs/net.hpp>

#include <cstdint>
#include <memory>
#include <mutex>

namespace dibs::http {

class shared_tokens {
 public:
  // How many tokens one slot of the schedule stands for at `per_minute`: enough that a slot is at
  // least 100 us (the store's record counts whole microseconds: a slot a token would hold 40M a
  // minute at 30M or 60M).
  static std::uint32_t tokens_per_slot(double per_minute);
  // `schedule`: a shared_rate whose slots are `per_slot` tokens each (per_second: the slots a
  // second), saving up a minute of them.
  explicit shared_tokens(std::shared_ptr<shared_rate> schedule, std::uint32_t per_slot = 1);

  // Returns once `n` tokens are this process's to send: from its credit first, then the store's
  // schedule (waiting for their time; while the store can't be asked, nothing is sent).
  awaitable<void> take(std::int64_t n);
  // A request reserved `reserved` and its answer said `used` (< 0: unknown, the reservation
  // stands; 0: nothing charged, as for a 429).
  void settle(std::int64_t reserved, std::int64_t used);

  std::int64_t credit() const {
    std::lock_guard lock(mutex_);
    return credit_;
  }
  double per_minute() const { return schedule_->per_second() * 60 * static_cast<double>(per_slot_); }

 private:
  // Under mutex_: what `n` tokens still need from the store after the credit (or the debt).
  std::int64_t from_credit(std::int64_t n);

  std::shared_ptr<shared_rate> schedule_;
  std::int64_t per_slot_;
  mutable std::mutex mutex_;
  std::int64_t credit_ = 0;  // negative: a debt
  // When the credit was last added to: the schedule saves up a minute, so a credit older than
  // that is dropped (kept, it would let this process go a minute's worth past the API's bucket).
  std::chrono::steady_clock::time_point credit_at_{};
};

}  // namespace dibs::http
