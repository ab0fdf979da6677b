// This process's side of the answers kept in the store (`--reuse-answers store`; answer_store.hpp):
// before a call, the leader of a request (answer_reuse.hpp) asks the store for an answer some
// process kept less than --answer-ttl ago; after an accepted answer, it is kept for the others.
// The store is called on two threads of this object's own, never on a shard.
//
// The store is a cache here, never a condition of the run: a lookup that fails counts as a miss
// (the API is asked), a keep that fails is dropped, and after a failure the store is left alone
// for `pause_after_error` (a dead database must not put a round trip and its timeout in front of
// every call). Keeps wait in a queue of at most `max_queued`; past that they are dropped, as are
// answers over `max_answer_bytes` (a statement the server would refuse must not rest the store).
#pragma once

#include <dibs/answer_store.hpp>
#include <dibs/net.hpp>
#include <dibs/offload.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace dibs::http {

// The record's key for a request key: its hex SHA-256, and the request.
answer_key stored_answer_key(const std::string& request_key);

struct stored_answer_figures {
  std::atomic<std::uint64_t> found{0};    // lookups that found an answer
  std::atomic<std::uint64_t> missed{0};   // lookups that found none (or could not look)
  std::atomic<std::uint64_t> kept{0};     // answers written
  std::atomic<std::uint64_t> dropped{0};  // answers not written: the queue was full or the store failed
  std::atomic<std::uint64_t> errors{0};   // store calls that failed
};

class stored_answers {
 public:
  stored_answers(std::shared_ptr<answer_store> store, std::chrono::milliseconds ttl,
                 std::chrono::milliseconds pause_after_error = std::chrono::seconds(10), std::size_t max_queued = 1000);
  ~stored_answers();  // queued keeps are written before it returns
  stored_answers(const stored_answers&) = delete;
  stored_answers& operator=(const stored_answers&) = delete;

  // The kept answer for `request_key`, or nullopt (none, too old, or the store failed or is
  // being left alone). Resumes on the caller's executor.
  awaitable<std::optional<std::string>> find(const std::string& request_key);
  static constexpr std::size_t max_answer_bytes = 1 << 20;
  // Queues `answer` to be kept for `request_key`; returns at once.
  void keep(const std::string& request_key, std::string answer);

  const stored_answer_figures& figures() const { return figures_; }

 private:
  bool resting() const;
  void failed(const char* doing, const std::exception& e);

  std::shared_ptr<answer_store> store_;
  std::chrono::milliseconds ttl_;
  std::chrono::milliseconds pause_after_error_;
  std::size_t max_queued_;
  std::atomic<std::size_t> queued_{0};
  std::atomic<std::int64_t> rest_until_ns_{0};  // steady clock; 0: the store is asked
  stored_answer_figures figures_;
  offload_pool pool_{2};  // last: joined (its queued keeps run) before the rest goes
};

}  // namespace dibs::http
