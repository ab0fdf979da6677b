#include "straggler_watch.hpp"

#include <algorithm>

namespace dibs::http {

std::chrono::milliseconds straggler_after(std::chrono::microseconds typical) {
  if (typical.count() <= 0) return std::chrono::milliseconds(0);
  const auto eight = std::chrono::duration_cast<std::chrono::milliseconds>(typical * 8);
  return std::max(eight, std::chrono::milliseconds(50));
}

void straggler_queue::push(straggler_entry& e) {
  e.prev = tail_;
  e.next = nullptr;
  if (tail_) tail_->next = &e;
  else head_ = &e;
  tail_ = &e;
  e.queued = true;
}

void straggler_queue::remove(straggler_entry& e) {
  if (!e.queued) return;
  (e.prev ? e.prev->next : head_) = e.next;
  (e.next ? e.next->prev : tail_) = e.prev;
  e.prev = e.next = nullptr;
  e.queued = false;
}

}  // namespace dibs::http
