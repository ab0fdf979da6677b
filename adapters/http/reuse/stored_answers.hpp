// This process's side of the answers kept in the store (`reuse_answers store`; answer_store.hpp):
// before a call, the leader of a request (answer_reuse.hpp) asks the store for an answer some
// process kept less than answer_ttl ago; after an accepted answer, it is kept for the others.
// The store is called on threads of this object's own, never on a shard: lookups on two, keeps
// on one more, so a slow keep never holds a lookup up. Keeps go out in batches: whatever queued
// while the last batch was written goes in the next statement (at most `keep_batch` answers and
// `keep_batch_bytes`).
//
// The store is a cache here, never a condition of the run: a lookup that fails counts as a miss
// (the API is asked), a keep that fails is dropped, and after a failure the store is left alone
// for `pause_after_error` (a dead database must not put a round trip and its timeout in front of
// every call). Lookups waiting for a thread are at most `max_queued` (more count as misses), and
// so are keeps (more are dropped), as are answers over `max_answer_bytes`. Each store call bounds
// its own time (statement timeouts); keeps still queued when this object goes are written only
// within `close_within`.
#pragma once

#include "engine/src/answer_store.hpp"
#include <dibs/net.hpp>
#include <dibs/offload.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dibs::http {

// The record's key for a request key: its hex SHA-256, and the request without its query (which
// may carry an API key). Throws std::runtime_error when the digest can't be made.
answer_key stored_answer_key(const std::string& request_key);

struct stored_answer_figures {
  std::atomic<std::uint64_t> found{0};    // lookups that found an answer
  std::atomic<std::uint64_t> missed{0};   // lookups that found none (or could not look)
  std::atomic<std::uint64_t> kept{0};     // answers written
  std::atomic<std::uint64_t> dropped{0};  // answers not written: too big, the queue full, the store failing
  std::atomic<std::uint64_t> errors{0};   // store calls that failed
};

struct stored_answer_limits {
  std::chrono::milliseconds pause_after_error{10'000};
  std::size_t max_queued = 10'000;
  std::size_t keep_batch = 500;
  std::size_t keep_batch_bytes = 1 << 20;
  std::chrono::milliseconds close_within{5'000};
};

class stored_answers {
 public:
  stored_answers(std::shared_ptr<answer_store> store, std::chrono::milliseconds ttl, stored_answer_limits limits = {});
  ~stored_answers();
  stored_answers(const stored_answers&) = delete;
  stored_answers& operator=(const stored_answers&) = delete;

  static constexpr std::size_t max_answer_bytes = 1 << 20;

  // The record's key for `request_key` (stored_answer_key), made once per request for both
  // find() and keep(); nullopt (counted as an error) if the digest could not be made.
  std::optional<answer_key> key_for(const std::string& request_key);
  // The kept answer for `k` and its age, or nullopt (none, too old, or the store failed or is
  // being left alone). Resumes on the caller's executor.
  awaitable<std::optional<kept_answer>> find(answer_key k);
  // Queues `answer` to be kept for `k`; returns at once.
  void keep(answer_key k, std::string answer);

  const stored_answer_figures& figures() const { return figures_; }
  std::size_t queued_keeps() const;

 private:
  bool resting() const;
  void failed(const char* doing, const std::exception& e);
  void write_keeps();  // on the keeps' lane: until the queue is empty

  std::shared_ptr<answer_store> store_;
  std::chrono::milliseconds ttl_;
  stored_answer_limits limits_;
  std::atomic<std::size_t> finds_queued_{0};
  mutable std::mutex keeps_mutex_;
  std::vector<std::pair<answer_key, std::string>> keeps_;
  bool writing_ = false;                                      // a write_keeps() is posted or running
  std::atomic<std::int64_t> rest_until_ns_{0};   // steady clock; 0: the store is asked
  std::atomic<std::int64_t> close_by_ns_{0};     // steady clock; 0: not closing
  stored_answer_figures figures_;
  // Last: joined (their queued calls run or are skipped) before the rest goes.
  offload_pool finds_{2};
  offload_pool keep_lane_{1};
};

}  // namespace dibs::http
