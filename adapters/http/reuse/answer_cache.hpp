// The answers an API gave, kept to be used again: an LRU bounded by entries AND bytes, each answer
// good for `ttl` after it arrived. Pure (the caller passes the time, tests move it) and not
// thread-safe: answer_reuse.hpp guards it.
//
// Only answers the run accepted (2xx, passed the JSON check) go in: answer_reuse puts nothing else.
// An entry's size is its key, its answer and a fixed overhead (the list node, the index), so
// `max_bytes` bounds the memory the cache holds, not just the payload.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>

namespace dibs::http {

struct answer_cache_limits {
  std::size_t max_entries = 100'000;
  std::size_t max_bytes = 64u << 20;
  std::chrono::milliseconds ttl{3'600'000};
};

class answer_cache {
 public:
  using clock = std::chrono::steady_clock;
  // What one entry costs beyond its key and answer (node, index slot, strings' headers).
  static constexpr std::size_t entry_overhead = 128;

  explicit answer_cache(answer_cache_limits limits) : limits_(limits) {}

  // The answer for `key` if one arrived less than ttl before `now` (it becomes the most recently
  // used); an expired one is dropped.
  std::optional<std::string> find(const std::string& key, clock::time_point now);
  // Keeps `answer` for `key` from `now` on (replacing an older one), then evicts the least
  // recently used entries until both limits hold. An answer that alone exceeds max_bytes is not
  // kept (it would evict everything for nothing).
  void put(const std::string& key, std::string answer, clock::time_point now);

  std::size_t entries() const { return index_.size(); }
  std::size_t bytes() const { return bytes_; }
  std::uint64_t evictions() const { return evictions_; }
  const answer_cache_limits& limits() const { return limits_; }

 private:
  struct entry {
    std::string key;
    std::string answer;
    clock::time_point arrived;
  };
  static std::size_t cost(const entry& e) { return e.key.size() + e.answer.size() + entry_overhead; }
  void erase(std::list<entry>::iterator it);

  answer_cache_limits limits_;
  std::list<entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<entry>::iterator> index_;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace dibs::http
