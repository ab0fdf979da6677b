// A count of work in progress that can be awaited to reach zero, as Seastar's gate: a shard's
// pipelines and background loops enter when they start and leave when they end, and shutdown
// says "wait until nothing is inside" in one line instead of polling flags. One thread only
// (the shard's).
#pragma once

#include "async_event.hpp"

#include <cstddef>

namespace dibs {

class gate {
 public:
  using clock = async_event::clock;

  void enter() { ++inside_; }
  void leave() {
    if (--inside_ == 0) emptied_.notify();
  }
  std::size_t inside() const { return inside_; }

  // Returns once nothing is inside (true), or at `deadline` (false if something still is).
  awaitable<bool> wait_empty(clock::time_point deadline = clock::time_point::max()) {
    while (inside_ > 0 && clock::now() < deadline) co_await emptied_.wait_until(deadline);
    co_return inside_ == 0;
  }

 private:
  std::size_t inside_ = 0;
  async_event emptied_;
};

}  // namespace dibs
