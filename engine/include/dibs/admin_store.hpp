// A store that a command line can administer: seed it, count it, watch it. The engine needs only
// `store`; `dibs seed`, `dibs status` and `dibs enrich --follow` use this too.
#pragma once

#include <dibs/store.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace dibs {

class admin_store : public store {
 public:
  // Inserts `n` pending items whose source is a random public IPv4 address; returns how many.
  virtual std::size_t seed(std::size_t n, std::uint64_t seed) = 0;
  // stats(), callable without a coroutine (not from a shard thread: it blocks).
  virtual store_stats stats_blocking() = 0;
  // Calls `on_change` when new work may have arrived; false when the store can't tell.
  virtual bool watch(std::function<void()> /*on_change*/) { return false; }
  virtual void stop_watching() {}
  // After a run (`drained`: nothing pending or leased): a store that has more to do at the end
  // does it here (the JSON Lines store writes OUT). Returns what the user should be told.
  virtual std::string finish(bool /*drained*/) { return {}; }
};

}  // namespace dibs
