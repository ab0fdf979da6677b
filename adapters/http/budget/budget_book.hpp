// One budget's book in this process (pure; unit-tested in tests/unit/test_call_budget.cpp):
// calls held (the whole --max-calls, or what was taken from the store's budget), items reserved
// (claimed and not ended yet: each may make one call), and calls spent. An item is claimed only
// when its call fits: reserved + spent never passes what is held, so the calls made never pass it
// either (a claimed item calls at most once; one served by a reused answer calls never and gives
// its room back when it ends).
#pragma once

#include <algorithm>
#include <cstdint>

namespace dibs::http {

class budget_book {
 public:
  explicit budget_book(std::uint64_t held = 0) : held_(held) {}

  // How many more calls must be held before `want` items fit (0: they do).
  std::uint64_t shortfall(std::uint64_t want) const {
    const auto needed = reserved_ + spent_ + want;
    return needed > held_ ? needed - held_ : 0;
  }
  // Up to `want` items reserved now; how many.
  std::uint64_t reserve(std::uint64_t want) {
    const auto room = held_ > reserved_ + spent_ ? held_ - reserved_ - spent_ : 0;
    const auto r = std::min(want, room);
    reserved_ += r;
    return r;
  }
  // Reserved items that ended (written, released, failed) or were never claimed.
  void ended(std::uint64_t n) { reserved_ -= std::min(n, reserved_); }
  void called() { ++spent_; }
  void hold(std::uint64_t n) { held_ += n; }
  // Held and not spent: what goes back to the store at the end (and what is left to this process).
  std::uint64_t unspent() const { return held_ > spent_ ? held_ - spent_ : 0; }
  std::uint64_t spent() const { return spent_; }
  std::uint64_t held() const { return held_; }
  std::uint64_t reserved() const { return reserved_; }

 private:
  std::uint64_t held_ = 0, reserved_ = 0, spent_ = 0;
};

}  // namespace dibs::http
