// This process's side of a rate shared through the store (`rate_scope store`): request slots
// come in blocks from the store's record (shared_rate_store.hpp), half a second of the rate at a
// time, spaced one interval apart from the time the store gave; the store is called on one
// thread of its own (never on a shard), one block at a time, so callers that find the block used
// up queue behind the one call that takes the next. A stop signal the API gave this process is
// written to the record (pause); one written by another process is read with each block, and
// again right before a block that had to wait is used, so it stops this process too.
//
// What the record says is kept within what a sane record can say: a block of at most the slots
// asked for, starting and paused no further off than `max_wait` (max_retry_after: the longest
// wait this process honors from an API). A record written by hand, by a process whose store
// clock jumped, or by someone hostile (a `paused_until_us` years ahead) would otherwise stop
// every process silently while /status says the API is up; it is cut to `max_wait`, with a
// warning that says which record and how to reset it.
//
// Store down: no slot is handed out (nothing is sent faster than the limit, so nothing is sent);
// callers ask again a second later, and the outage is logged once.
#pragma once

#include <dibs/net.hpp>
#include <dibs/offload.hpp>
#include "engine/src/shared_rate_store.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace dibs::http {

class shared_rate {
 public:
  using clock = std::chrono::steady_clock;

  // `origin`: the record's key (scheme://host:port of the API); `per_second`: this process's rate.
  // After a store call failed, the store is asked again no sooner than `store_retry` later.
  // `saved`: a schedule that saves up unused slots that far back (a token bucket's capacity;
  // rate_block_request::saved): the past slots of a block are then due at once, never dropped.
  shared_rate(std::shared_ptr<shared_rate_store> store, std::string origin, double per_second,
              std::chrono::milliseconds store_retry = std::chrono::seconds(1),
              std::chrono::milliseconds max_wait = std::chrono::hours(1), std::chrono::microseconds saved = {});

  struct turn {
    bool granted = false;               // false: the store could not be asked; ask again at `at`
    clock::time_point at{};             // when the request may be sent (or the store asked again)
    bool recheck = false;               // the block had to wait: read the pause again before sending
    clock::time_point paused_until{};   // the record's pause, by this process's clock (past: none)
  };
  // The next slot: one of the current block's, or the first of a new block. With `n`, the next
  // n slots at once (a schedule of tokens: a request takes its tokens' worth), `at` the last one's.
  awaitable<turn> next(std::uint32_t n = 1);
  turn next_blocking(std::uint32_t n = 1);
  // The record's pause now, by this process's clock (past or epoch: none; also when unreadable).
  awaitable<clock::time_point> paused_until();
  clock::time_point paused_until_blocking();
  // The API said stop until `until`: the rest of the block is dropped, and the record paused
  // (written on the store's thread; many stops at once make one write).
  void pause(clock::time_point until);

  const std::string& origin() const { return origin_; }
  std::uint32_t block() const { return block_; }
  double per_second() const { return per_second_; }

 private:
  void write_pause();
  // Under mutex_: up to `want` slots of the block in hand, those it still has worth sending;
  // returns how many (t.at: the last one's time).
  std::uint32_t from_block(clock::time_point asked, turn& t, std::uint32_t want);
  void store_failed(const char* doing, const std::exception& e);
  // Under mutex_: the record's block or pause within bounds, warned about when it was not.
  rate_block sane(rate_block b, std::uint32_t asked);
  std::chrono::microseconds sane_pause(std::chrono::microseconds p);
  void warn_insane(const char* what, std::chrono::microseconds said);

  std::shared_ptr<shared_rate_store> store_;
  std::string origin_;
  double per_second_;
  std::uint32_t block_;
  std::chrono::microseconds interval_;
  std::chrono::microseconds saved_;

  std::mutex mutex_;
  clock::time_point block_start_{};
  std::uint32_t used_ = 0, granted_ = 0;
  clock::time_point pause_to_write_{};
  bool pause_posted_ = false;
  bool store_down_ = false;  // told once per outage
  std::chrono::milliseconds store_retry_;
  clock::time_point retry_at_{};  // after a failed call, the store is not asked again before this
  std::chrono::microseconds max_wait_;
  clock::time_point warned_at_{};  // the last warning about an insane record (one a minute at most)

  offload_pool pool_{1};  // last: joined (its queued calls run) before the rest goes
};

}  // namespace dibs::http
