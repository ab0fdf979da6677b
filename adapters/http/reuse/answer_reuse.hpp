// Answer reuse (`reuse_answers`): documents whose request is identical share one API call.
// Shared by every shard of a process (thread-safe): an answer cache (answer_cache.hpp) and the
// calls in flight, by request key.
//
// For a key, a caller either
//   - finds a cached answer (reused): no call at all;
//   - finds the same call in flight (joined): it waits for that call's outcome; or
//   - leads: it makes the call and then hands its outcome to every waiter (finish()).
//
// What a joined waiter gets (decided here, applied by the processor: shared_outcome()):
//   - the answer: it is done, like the leader;
//   - the leader's permanent failure (a 4xx, ip-api's "status":"fail", an oversized body): it
//     fails too. Those are about the request, and its request is the same.
//   - the leader's retry (429, 5xx, a timeout, a bad body): it is retried too, as if its own call
//     had failed: given back with a delay of its own (its own attempt count and backoff, at least
//     as long as the API asked), so it spends one of ITS attempts and is failed only when its own
//     attempts run out, never because the leader's did. An API-level failure waits under its
//     lease like the leader's, but does not count in its shard's circuit breaker: one call is one
//     piece of evidence that the API is down, however many documents waited for it.
//   - no outcome at all (the leader was cancelled: shutdown, max-processing, its pipeline threw):
//     the waiters are woken to try again themselves; the first becomes the new leader. A leader's
//     trouble that is not the API's never settles another document.
// Only answers the run would have accepted (2xx, passed the JSON check) are cached; failures and
// 429s never are (no negative cache: a key that fails is asked again next time).
#pragma once

#include "answer_cache.hpp"
#include "stored_answers.hpp"

#include <dibs/counters.hpp>
#include <dibs/net.hpp>
#include <dibs/outcome.hpp>

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dibs::http {

class answer_reuse {
 public:
  struct waiter;  // one joined caller, woken on its own executor

  // What begin() found for a key.
  struct turn {
    std::optional<std::string> cached;  // reused: this answer
    std::shared_ptr<waiter> joined;     // joined: await wait(key, joined)
    bool leads() const { return !cached && !joined; }
  };

  explicit answer_reuse(answer_cache_limits limits) : cache_(limits) {}

  // Answers kept in the store too (`reuse_answers store`): a leader asks it before calling and
  // keeps what the API answered. Set before any call.
  void store_in(std::shared_ptr<stored_answers> stored) { stored_ = std::move(stored); }
  stored_answers* stored() const { return stored_.get(); }

  // `ex`: the caller's executor (its shard's), where a joined caller's outcome is delivered.
  turn begin(const std::string& key, net::any_io_executor ex);
  // The leader's call ended: `o` is its outcome (a done one is cached), handed to every waiter;
  // null when it ended without one (the waiters then try again themselves). Any thread.
  void finish(const std::string& key, const outcome* o) { finish(key, o, answer_cache::clock::now()); }
  // The same for an answer that arrived earlier (one kept in the store): its answer_ttl in this
  // process's cache runs from `arrived`.
  void finish(const std::string& key, const outcome* o, answer_cache::clock::time_point arrived);
  // A joined caller's wait, on its own executor: the leader's outcome, or nullopt when the leader
  // ended without one (call begin() again). Throws operation_aborted when the caller is
  // cancelled; it then leaves the call, which goes on for the others.
  awaitable<std::optional<outcome>> wait(const std::string& key, std::shared_ptr<waiter> w);

  // For the tests and the figures.
  std::size_t cached_entries() const;
  std::size_t cached_bytes() const;
  std::size_t calls_in_flight() const;
  std::size_t waiters(const std::string& key) const;  // joined callers of that call now

  // The leader's guard: finish(key, nullptr) unless finished with an outcome (an exception, a
  // cancelled coroutine frame: its waiters must not wait for an outcome that never comes).
  class lead {
   public:
    lead(answer_reuse& r, std::string key) : r_(&r), key_(std::move(key)) {}
    lead(const lead&) = delete;
    lead& operator=(const lead&) = delete;
    ~lead() {
      if (r_) r_->finish(key_, nullptr);
    }
    void finish(const outcome* o, answer_cache::clock::time_point arrived = answer_cache::clock::now()) {
      auto* r = std::exchange(r_, nullptr);
      if (r) r->finish(key_, o, arrived);
    }

   private:
    answer_reuse* r_;
    std::string key_;
  };

 private:
  struct call {
    std::vector<std::shared_ptr<waiter>> waiters;
  };
  std::shared_ptr<stored_answers> stored_;
  mutable std::mutex mutex_;
  answer_cache cache_;
  std::unordered_map<std::string, call> calls_;
};

// A joined or reused document's own outcome from the leader's (see above): `own_backoff` is the
// delay its own attempt count draws; marked `shared` (the circuit breaker does not count it).
outcome shared_outcome(const outcome& leader, std::chrono::milliseconds own_backoff);

}  // namespace dibs::http
