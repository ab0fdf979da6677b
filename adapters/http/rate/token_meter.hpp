// The tokens an LLM API meters (tokens per minute), held as its server holds them: a bucket as
// full as `per_minute` at most, refilled continuously at per_minute/60 a second (OpenAI's and
// Anthropic's, both documented so). A request is admitted when the bucket holds what the server
// will charge it on arrival (its max_tokens plus its prompt, estimated: request_tokens.hpp), and
// settled with what its answer says it used; a request the server never charged (a 429, never
// sent) gives its tokens back whole.
//
// What the headers say is left pulls the bucket to the server's own count, which holds every
// other process's requests and the server's own settling: the server's level, less what this
// process admitted since the answered request went out and has not seen settled. That errs full
// (a server that counted those already has them counted twice): a bucket held fuller than it is
// costs a level, never throughput, while one held emptier costs 429s.
//
// Other processes on the same key: this process's share of what the key spends is learned from
// its readings (its own net spending over the server's, across the last second), and what it
// takes counts in its bucket for the whole key's (1/share): N processes that read the same
// remaining take it once between them. Learned from readings, it lags where the spending jumps.
//
// Admission is by polling (try_take says when to try again) rather than by booking future
// times, so a pull that finds less room holds every waiter at once. GCRA over tokens; time is
// passed in; thread-safe (one per API, shared by every shard). Unit-tested in
// tests/unit/test_token_meter.cpp.
#pragma once

#include "request_tokens.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace dibs::http {

class token_meter {
 public:
  using clock = std::chrono::steady_clock;

  // per_minute <= 0: no limit until an answer's headers state one.
  explicit token_meter(double per_minute = 0);

  // The user's limit (tokens a minute): the most any stated limit may raise it to.
  void give_limit(double per_minute);

  // Whether a limit is known (given, or stated by the API): until then nothing is held.
  bool active() const { return per_minute_.load(std::memory_order_relaxed) > 0; }
  // Whether requests are still counted while no limit is known: until the first answers state
  // one (the requests sent before it are then known), or 32 answers stated none (not an API
  // metered in tokens: no request pays for the count from then on).
  bool watching() const { return active() || unmetered_answers_.load(std::memory_order_relaxed) < 32; }
  // An answer stated no token limit.
  void answered_unmetered();
  double per_minute() const { return per_minute_.load(std::memory_order_relaxed); }

  struct admitted {
    std::uint64_t id = 0;
    std::int64_t tokens = 0;
    clock::time_point at{};  // when it was admitted
  };
  struct take_result {
    std::optional<admitted> ticket;  // admitted now
    clock::time_point retry_at{};    // else: when the bucket will hold them, as it stands now
  };
  // `tokens` now if the bucket holds them (they are taken), else when to try again. Without a
  // limit, admitted at once (and counted for the first reading).
  take_result try_take(std::int64_t tokens, clock::time_point now);
  // The request went out (its last byte written) at `at`: until then, admitted or not, the server
  // has not seen it, however old its admission (it waited for a rate slot or a connection). On a
  // new connection (`reused` false) a busy server with a long listen queue reads it only once it
  // accepts that connection, which it does in the order they came: it is held unseen until the
  // answer of a request on a new connection written no earlier than it (its own, or a later
  // one's) says the server accepted that far. (Taken for seen once written, 4 processes against
  // a listen queue of 1,024 had 1.3-3.4% of their calls refused where the first minute's bucket
  // ran out; held unseen for a second only, 4.8-5.9%.) Written again (its first connection went
  // stale), it is as the last write says.
  void written(const admitted& a, clock::time_point at, bool reused = true);
  // The answer said what the request used (`used` >= 0): the difference goes back (or is taken).
  // `answered`: an answer came (else the request failed unanswered, or was never sent).
  void settle(const admitted& a, std::int64_t used, clock::time_point now, bool answered = false);
  // The server never charged it (refused with 429 or 529, never sent): all of it goes back.
  void give_back(const admitted& a, clock::time_point now) { settle(a, 0, now); }
  // An answer's reading of the server's bucket (what is left, the limit when stated), for a
  // request written at `sent`: the requests written after it, and those not written yet, are
  // held unseen by the server. A stated limit becomes this meter's when it has none or a
  // larger one (the given one caps it).
  void read(std::int64_t remaining, std::optional<std::int64_t> limit, clock::time_point sent, clock::time_point now);

  // What the bucket holds by this process's count (a whole minute's when full).
  std::int64_t level(clock::time_point now) const;
  // The most one request may be charged: the whole bucket.
  std::int64_t capacity() const { return static_cast<std::int64_t>(per_minute()); }
  // This process's share of what the key spends, as its readings show it (1 alone).
  double share() const {
    std::lock_guard lock(mutex_);
    return share_;
  }
  // What a request will be charged, learned from the answers' usage.
  token_estimator estimator;
  // A request is charged `total` tokens, `output` of them its output (its max_tokens, or what the
  // answers use): the share of the input in the recent requests' charges (0 before any), which
  // reads an API's input and output buckets held apart (Anthropic's) in this meter's whole tokens.
  // The charges' mix, not the answers' usage: the server holds a request's max_tokens of its
  // output bucket while it runs, as this meter holds its charge; what an answer gives back, the
  // next reading shows (at the usage's mix, 4 processes sharing an output-bound key saw 3% of
  // their calls refused).
  void note_charge(std::int64_t total, std::int64_t output);
  double input_share() const { return input_share_.load(std::memory_order_relaxed); }
  // Input and output buckets held apart (Anthropic's), their limits as last stated: a request
  // whose prompt alone, or whose max_tokens alone, is more than its bucket's whole limit never
  // fits, whatever the whole tokens at the mix say. 0: not stated.
  void parts_limits(std::int64_t input, std::int64_t output) {
    input_capacity_.store(input, std::memory_order_relaxed);
    output_capacity_.store(output, std::memory_order_relaxed);
  }
  std::int64_t input_capacity() const { return input_capacity_.load(std::memory_order_relaxed); }
  std::int64_t output_capacity() const { return output_capacity_.load(std::memory_order_relaxed); }

  // Tokens settled by answers (their usage), for the figures.
  std::uint64_t used_total() const { return used_total_.load(std::memory_order_relaxed); }

 private:
  struct in_flight {
    std::uint64_t id;
    clock::time_point at;  // admitted
    std::int64_t tokens;
    clock::time_point written = clock::time_point::max();  // not yet
    bool fresh = false;  // ... on a new connection
  };
  std::deque<in_flight>::iterator unsettled_of(const admitted& a);  // under mutex_; end() when gone
  void set_limit(double per_minute, clock::time_point now);  // under mutex_
  clock::duration per_token() const;  // under mutex_

  std::atomic<double> per_minute_{0};
  double given_ = 0;   // the limit the user gave (0: none)
  double stated_ = 0;  // the limit the API's headers last stated (0: none)
  mutable std::mutex mutex_;
  clock::time_point tat_{};  // when the bucket is full again, by this process's count
  std::uint64_t next_id_ = 1;
  std::deque<in_flight> unsettled_;  // admitted, not settled, oldest first
  clock::time_point newest_read_{};  // the latest `sent` a reading was taken from
  clock::time_point accepted_to_{};  // requests on new connections written up to here were read
  // This process's share of what the key spends (1 alone), from the readings of the last second:
  // the server's deficit and this process's own net spending when each was read.
  struct reading {
    clock::time_point at;
    double deficit;
    double own;
  };
  std::deque<reading> window_;
  double own_net_ = 0;  // tokens admitted, less what settling gave back
  double share_ = 1;
  std::atomic<std::uint64_t> used_total_{0};
  std::atomic<double> input_share_{0};
  std::atomic<std::int64_t> input_capacity_{0}, output_capacity_{0};
  std::atomic<int> unmetered_answers_{0};
};

}  // namespace dibs::http
