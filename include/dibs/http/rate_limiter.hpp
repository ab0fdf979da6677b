// The request rate for an API, shared by every shard of a process: a token bucket (`rate N/s`
// or `N/min`, a burst of `burst` requests allowed), plus what the API itself says. When a host
// says stop (ip-api's `X-Rl: 0` with `X-Ttl`, `Retry-After` on 429/503, `RateLimit-Remaining: 0`
// with `RateLimit-Reset`), no shard sends it anything until that time. Thread-safe.
#pragma once

#include <dibs/rate_control.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dibs::http {

class shared_rate;
class shared_tokens;  // shared_tokens.hpp (internal): the tokens a minute given, held by every process on a store
class token_meter;  // token_meter.hpp (internal): the tokens an LLM API meters

// "45/min", "10/s", "2.5/s" -> requests per second; nullopt when malformed or not positive.
std::optional<double> parse_rate(const std::string& text);

// When the headers of a response tell the client to stop sending to this host, until when
// (relative to `now`, by the server's `Date` where an HTTP date is given): ip-api's X-Rl: 0, a
// quota or an LLM provider's tokens with none left, and for a 429, 503 or 529 (Anthropic's
// "overloaded") retry-after-ms or Retry-After. nullopt otherwise.
// Not capped here (only kept from overflowing): honor_stop_signals caps it at max_retry_after.
// `tokens_metered`: the tokens are held by a token_meter, which waits for room as it refills, so
// tokens none left pause nothing (their reset is when the bucket is full again: far too late).
std::optional<std::chrono::system_clock::time_point> stop_until_from_headers(
    int status, const std::vector<std::pair<std::string, std::string>>& headers, std::chrono::system_clock::time_point now,
    bool tokens_metered = false);

// Whether the headers themselves say when to come back (Retry-After, X-Rl: 0, RateLimit-
// Remaining: 0, an LLM provider's tokens none left): what stop_until_from_headers reads with no
// token meter, without its own guess for a bare 429.
bool says_when_to_return(int status, const std::vector<std::pair<std::string, std::string>>& headers);

class rate_limiter final : public rate_control {
 public:
  using clock = std::chrono::steady_clock;

  // per_second <= 0: no token bucket (only the API's stop signals apply).
  explicit rate_limiter(double per_second = 0, double burst = 1);
  ~rate_limiter();

  // One request slot, held until the request goes out. A slot that is dropped unused (its waiter
  // was cancelled: shutdown, an abandoned call) goes back to the limiter, so cancelled waiters
  // never push the schedule of everyone else further ahead. Move-only; use it on its own thread.
  class slot {
   public:
    slot() = default;
    slot(slot&& o) noexcept { *this = std::move(o); }
    slot& operator=(slot&& o) noexcept;
    ~slot() { give_back(); }
    // When the request may be sent (now or later).
    clock::time_point at() const { return at_; }
    // The request goes out: the slot is spent and never given back.
    void use() { owner_ = nullptr; }

   private:
    friend class rate_limiter;
    void give_back();
    rate_limiter* owner_ = nullptr;
    clock::time_point at_{};
    clock::time_point tat_after_{};  // the schedule right after this slot was taken
    std::uint64_t generation_ = 0;   // the rate it was taken under (set_per_second)
    std::uint64_t quota_epoch_ = 0;  // the quota's times it was taken under (follow_quota)
   public:
    std::uint64_t generation() const { return generation_; }
    std::uint64_t quota_epoch() const { return quota_epoch_; }
  };

  // Takes the next request slot for `host`. Each call takes one slot, so concurrent callers
  // are spaced out; a slot given back is handed to the next caller that can use its time.
  slot take(const std::string& host);
  // take() and use() at once: returns when the request may be sent. With a shared rate, a slot
  // of it too (blocking: for callers outside the shards, like the pre-flight).
  clock::time_point reserve(const std::string& host);
  // The host said stop: nothing is sent to it before `until` (with a shared rate, by any process).
  void pause(const std::string& host, clock::time_point until);
  // The same, in this process only: a pause read from the shared rate's record.
  void pause_here(const std::string& host, clock::time_point until);
  // The API's quota as an answer's headers state it (X-RateLimit-*, RateLimit-*, RateLimit): from
  // then on `host`'s requests are spread so that no window, as the API counts it, gets more than
  // it allows (quota_pacer.hpp); `sent` is when the answered request went out. No request is
  // held more than `max_wait` for it. The newest reading wins over times handed out before it:
  // a slot whose time it withdrew is stale (quota_epoch() moved), and its waiter takes another.
  // Returns true the first time (for `host`) the quota asks for a wait longer than max_wait
  // (capped): the caller says so once.
  bool follow_quota(const std::string& host, const std::vector<std::pair<std::string, std::string>>& headers,
                    clock::time_point sent, std::chrono::milliseconds max_wait);
  std::uint64_t quota_epoch() const { return quota_epoch_.load(std::memory_order_acquire); }

  // `rate_scope store`: the rate is the store's (shared_rate.hpp), and this limiter keeps only
  // the pauses; wait_for_slot takes each request's slot from `s` as well. Call before any take().
  void share(std::shared_ptr<shared_rate> s);
  shared_rate* shared() const { return shared_.get(); }
  // When `host` may be sent to again (a past time when it is not paused).
  clock::time_point paused_until(const std::string& host) const;

  // The tokens a minute the API meters (token_meter.hpp), for every shard: a limit given
  // (token_rate) or stated by the API's headers; none until then.
  token_meter& tokens() const { return *tokens_; }
  // `rate_scope store` with a token rate given: the tokens every process takes before a request
  // goes (nullptr: this process's meter alone). Call before any request.
  void share_tokens(std::shared_ptr<shared_tokens> t) { shared_tokens_ = std::move(t); }
  shared_tokens* tokens_shared() const { return shared_tokens_.get(); }

  // A new rate from now on (<= 0: none), for every shard at once (POST /rate). The schedule starts
  // afresh: slots taken under the old rate are stale (generation() moved on), and a waiter that
  // sees it takes a new one (exchange_policy.cpp's wait_for_slot), so a higher rate applies
  // within a second instead of after the old schedule's queue.
  void set_per_second(double per_second) override;
  // The rate in force (what /status and the dashboard show): the shared one when there is one.
  double per_second() const override;
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  void apply_rate(double per_second);  // under mutex_ (or in the constructor)
  std::atomic<double> per_second_{0};
  double burst_ = 1;
  std::atomic<std::uint64_t> generation_{0};
  clock::duration interval_{};
  clock::duration tolerance_{};  // (burst - 1) intervals: how far ahead of schedule a request may go
  mutable std::mutex mutex_;
  void give_back(const slot& s);

  clock::time_point tat_{};      // theoretical arrival time of the next request (GCRA)
  // Future slot times given back before the schedule moved past them (earliest first); a past
  // one is simply gone: the rate was not used then.
  std::multiset<clock::time_point> returned_;
  std::unordered_map<std::string, clock::time_point> paused_;
  // Each host's quota (quota_pacer.hpp), kept here and defined with the limiter.
  struct quota_book;
  std::unique_ptr<quota_book> quota_;
  std::atomic<std::uint64_t> quota_epoch_{0};
  std::atomic<bool> any_quota_{false};  // a host has a quota: reserve() takes the lock
  // The latest pause of any host: while it is past and there is no rate, reserve() needs no lock
  // (the common case, once per request on every shard).
  std::atomic<clock::rep> any_paused_until_{0};
  std::shared_ptr<shared_rate> shared_;
  std::unique_ptr<token_meter> tokens_;
  std::shared_ptr<shared_tokens> shared_tokens_;
};

}  // namespace dibs::http
