// A count of work in progress that can be awaited to reach zero, as Seastar's gate: a shard's
// pipelines and background loops hold it while they run, and shutdown says "wait until nothing is
// inside" in one line instead of polling flags. One thread only (the shard's).
//
// Work holds the gate through a holder (RAII): the count drops when the holder is destroyed, so a
// coroutine that ends by an exception still leaves; `holder::leave()` leaves earlier, where the
// work is done but its coroutine goes on. Once closed, the gate admits nothing new (`try_hold`).
#pragma once

#include "async_event.hpp"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <utility>

namespace dibs {

class gate {
 public:
  using clock = async_event::clock;

  class holder {
   public:
    holder() = default;
    holder(holder&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)) {}
    holder& operator=(holder&& other) noexcept {
      if (this != &other) {
        leave();
        gate_ = std::exchange(other.gate_, nullptr);
      }
      return *this;
    }
    holder(const holder&) = delete;
    holder& operator=(const holder&) = delete;
    ~holder() { leave(); }

    // Leaves now (once; the destructor then does nothing).
    void leave() {
      if (gate_) std::exchange(gate_, nullptr)->left();
    }
    bool holds() const { return gate_ != nullptr; }

   private:
    friend class gate;
    explicit holder(gate& g) : gate_(&g) { ++g.inside_; }
    gate* gate_ = nullptr;
  };

  // Enters; throws std::logic_error once the gate is closed (entering then is a bug).
  holder hold() {
    if (closed_) throw std::logic_error("gate: entered after close()");
    return holder(*this);
  }
  // Enters unless the gate is closed.
  std::optional<holder> try_hold() {
    if (closed_) return std::nullopt;
    return holder(*this);
  }
  std::size_t inside() const { return inside_; }
  bool closed() const { return closed_; }

  // Returns once nothing is inside (true), or at `deadline` (false if something still is).
  awaitable<bool> wait_empty(clock::time_point deadline = clock::time_point::max()) {
    while (inside_ > 0 && clock::now() < deadline) co_await emptied_.wait_until(deadline);
    co_return inside_ == 0;
  }
  // Admits nothing more, then waits until nothing is inside.
  awaitable<void> close() {
    closed_ = true;
    co_await wait_empty();
  }

 private:
  void left() {
    if (--inside_ == 0) emptied_.notify();
  }

  std::size_t inside_ = 0;
  bool closed_ = false;
  async_event emptied_;
};

}  // namespace dibs
