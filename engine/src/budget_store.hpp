// A budget of API calls kept in the store for every process that works on it (`budget
// 100000/day`): per key (the API's origin and the period, "http://api:80 day 2026-11-28"), how
// many calls the processes took. A process takes a few at a time, by one atomic update that never
// takes past the limit, and gives back what it did not use when it ends; one that dies keeps what
// it took until the period ends (the budget errs on the side of fewer calls). Blocking calls (a
// process runs them on a thread of its own, never on a shard); they throw when the store can't be
// reached.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dibs {

struct budget_take {
  std::uint64_t granted = 0;  // calls taken now (0: the budget is spent)
  std::uint64_t used = 0;     // the key's calls taken by every process, these included
};

struct budget_record {
  std::string key;
  std::uint64_t used = 0;
  std::uint64_t limit = 0;  // the limit the last process that took from it had
};

// What one take grants: up to `want`, never past `limit` with `used` taken already.
inline std::uint64_t budget_grant(std::uint64_t used, std::uint64_t want, std::uint64_t limit) {
  const auto room = limit > used ? limit - used : 0;
  return want < room ? want : room;
}

class budget_store {
 public:
  virtual ~budget_store() = default;
  // Up to `want` more calls of `key`, never past `limit` in all.
  virtual budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) = 0;
  // `n` calls taken and not made go back.
  virtual void give_back(const std::string& key, std::uint64_t n) = 0;
  // Every key's record (dibs status).
  virtual std::vector<budget_record> records() = 0;
};

}  // namespace dibs
