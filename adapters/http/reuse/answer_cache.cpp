#include "answer_cache.hpp"

namespace dibs::http {

std::optional<std::string> answer_cache::find(const std::string& key, clock::time_point now) {
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  auto e = it->second;
  if (now - e->arrived >= limits_.ttl) {
    erase(e);
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, e);
  return e->answer;
}

void answer_cache::put(const std::string& key, std::string answer, clock::time_point now) {
  if (auto it = index_.find(key); it != index_.end()) erase(it->second);
  entry e{key, std::move(answer), now};
  const auto c = cost(e);
  if (limits_.max_entries == 0 || c > limits_.max_bytes) return;
  lru_.push_front(std::move(e));
  index_.emplace(key, lru_.begin());
  bytes_ += c;
  while (!lru_.empty() && (index_.size() > limits_.max_entries || bytes_ > limits_.max_bytes)) {
    erase(std::prev(lru_.end()));
    ++evictions_;
  }
}

void answer_cache::erase(std::list<entry>::iterator it) {
  bytes_ -= cost(*it);
  index_.erase(it->key);
  lru_.erase(it);
}

}  // namespace dibs::http
