// Polls a condition until it holds or a generous bound passes (the machine may be loaded): the
// tests' way to wait for something another process or thread does, never a fixed sleep.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace dibs::test {

inline bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds bound = std::chrono::seconds(60),
                       std::chrono::milliseconds step = std::chrono::milliseconds(10)) {
  const auto end = std::chrono::steady_clock::now() + bound;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(step);
  }
  return true;
}

}  // namespace dibs::test
