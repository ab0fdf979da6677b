// Answers bought before the run for items the run will claim: the pre-flight's (dibs enrich asks
// the API for a pending item or two before claiming anything). The run uses each for its item
// instead of buying it again, so a start does not pay twice for the items its pre-flight asked.
// Keyed by the request's identity (request_builder.hpp's request_identity), each taken once; a
// few at most, kept for the run. Thread-safe.
#pragma once

#include <dibs/http/client.hpp>
#include <dibs/job.hpp>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace dibs::http {

// A batch template's row asked alone by the pre-flight: its one-row answer, by the row's id.
inline std::string batch_row_identity(const job& j) { return "batch row " + j.id; }

class prefetched_answers {
 public:
  void keep(std::string identity, response r) {
    if (identity.empty()) return;
    std::lock_guard lock(mutex_);
    answers_.insert_or_assign(std::move(identity), std::move(r));
    any_.store(true, std::memory_order_release);
  }
  // Whether any answer is still held: the caller builds an identity only then (once the few
  // kept answers are taken, the per-document cost is this load).
  bool holds_any() const { return any_.load(std::memory_order_acquire); }
  // The answer kept for `identity`, at most once.
  std::optional<response> take(const std::string& identity) {
    if (!holds_any()) return std::nullopt;
    std::lock_guard lock(mutex_);
    auto it = answers_.find(identity);
    if (it == answers_.end()) return std::nullopt;
    auto r = std::move(it->second);
    answers_.erase(it);
    if (answers_.empty()) any_.store(false, std::memory_order_release);
    return r;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, response> answers_;
  std::atomic<bool> any_{false};
};

}  // namespace dibs::http
