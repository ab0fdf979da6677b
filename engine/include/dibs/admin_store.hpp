// A store that a command line can administer: seed it, count it, watch it. The engine needs only
// `store`; `dibs seed`, `dibs status` and `dibs enrich --follow` use this too.
#pragma once

#include <dibs/store.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dibs {

// One open item (not done, not failed), read without claiming it: what `dibs enrich` checks the
// --url template against before it claims anything (the pre-flight).
struct pending_sample {
  std::string id;                   // as the engine and the logs name it
  job_field source;                 // the store's source field, read as a claim reads it
  std::vector<std::string> fields;  // the names the item has (SQL: the table's columns)
};

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
  // One open item, preferably one whose source field is usable; nullopt when none is open (or
  // the store can't tell). Reads only: no lease is taken, no attempt spent.
  virtual std::optional<pending_sample> sample_pending() { return std::nullopt; }
};

}  // namespace dibs
