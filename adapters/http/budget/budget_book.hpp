// One budget's book in this process (pure; unit-tested in tests/unit/test_call_budget.cpp):
// calls held (the whole max_calls, or what was taken from the store's budget), items reserved
// (claimed and not ended yet: each may make one call), and calls spent. The invariant: calls
// spent never pass calls held. An item is claimed only when its call fits (reserved + spent <=
// held), so its first call needs no check: until the item ends, its reservation stands for it.
// A further call of the same claim (an item run again after an outage) needs room of its own,
// checked then: reserved + spent + 1 <= held. An item served by a reused answer calls never and
// gives its room back when it ends.
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
  // A call goes out: an item's first of its claim needs one call held beyond those spent (its
  // reservation made sure of it, unless a new period began since); a further one must leave room
  // for every reserved item too. false: no room, and no call may be made. Either way calls spent
  // never pass calls held.
  bool call(bool first) {
    if (spent_ + 1 > held_ || (!first && reserved_ + spent_ + 1 > held_)) return false;
    ++spent_;
    return true;
  }
  // A new period (a day, a month): nothing held or spent in it yet; the items reserved go on, and
  // must be held again from the new period's budget.
  void new_period() { held_ = spent_ = 0; }
  void called() { ++spent_; }  // a call that reserved its own room (a probe, the pre-flight)
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
