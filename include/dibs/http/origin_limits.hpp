// One adaptive limit per API origin for the whole run (adaptive_limit.hpp), shared by every
// shard's HTTP client: a small server's capacity is the process's to find, not each thread's
// (two shards probing upward on their own would together overflow a backlog of 5). Each shard's
// client runs its share of the limit (limit_share: as few shards as get four calls each), at
// least one request; every client feeds the one limit its answers and overload signals. Thread-safe; the decisions themselves are the
// pure adaptive_limit's, under a mutex taken once per request start and end.
//
// origin_limits is the run's registry of them (kept in the HTTP figures), and what /metrics,
// /status, the dashboard, the progress line and the summary read.
#pragma once

#include <dibs/http/adaptive_limit.hpp>
#include <dibs/http/rate_finder.hpp>

#include <dibs/prometheus_writer.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace dibs::http {

struct limit_view {
  std::size_t limit = 0;      // requests allowed in flight now
  std::size_t ceiling = 0;    // the most it may reach (concurrency)
  std::size_t in_flight = 0;  // requests in flight, counted against the limit
  std::size_t stragglers = 0; // ... and beside it: far later than the API's usual answer
  std::size_t waiting = 0;    // requests waiting for the limit
  std::size_t lowest = 0, highest = 0;  // the range the limit moved in
  std::chrono::microseconds min_latency{0};     // the fastest answer's first byte
  std::chrono::microseconds recent_latency{0};  // the last round trip's (lower quartile)
  limit_signal last_decrease = limit_signal::none;
  std::uint64_t decreases = 0;
  bool slow_start = false;
  // The pace (rate_finder.hpp): requests per second allowed now, 0 while the API never refused
  // for its rate; the range it moved in, and how often it went down.
  double pace_per_s = 0;
  double pace_lowest = 0, pace_highest = 0;
  std::uint64_t pace_decreases = 0;
};

class origin_limit {
 public:
  using clock = adaptive_limit::clock;

  origin_limit(std::string origin, adaptive_settings s, clock::time_point now = clock::now());

  const std::string& origin() const { return origin_; }
  std::size_t limit() const { return limit_.load(std::memory_order_relaxed); }
  // The limit's ceiling now (adaptive_settings::max, set_max): the same for every shard reading it.
  double ceiling() const { return ceiling_.load(std::memory_order_relaxed); }
  // Requests per second the origin's pace allows now (rate_finder.hpp), 0 while it has none.
  double pace() const { return pace_.load(std::memory_order_relaxed); }
  // The pace's turns, one origin's for every shard: true when a request may go now (its turn
  // taken), else false and `at` says when to look again (the pace may change meanwhile; nothing
  // is booked ahead, so a waiter that goes away leaves no turn behind). True while unpaced.
  bool take_turn(clock::time_point now, clock::time_point& at);
  // A request goes out; `waited`: it waited for the pace first.
  void sent(bool waited) {
    sends_.fetch_add(1, std::memory_order_relaxed);
    if (waited) paced_waits_.fetch_add(1, std::memory_order_relaxed);
  }
  // The origin's usual time to first byte (adaptive_limit::typical_latency; 0 before any).
  std::chrono::microseconds typical_latency() const {
    return std::chrono::microseconds(typical_us_.load(std::memory_order_relaxed));
  }

  // What a round trip's decision did, for the client that made it: its permits follow, the
  // engine hears of a change, the operator of a decrease the API caused (`advice`, at most one a
  // minute per origin).
  struct decision {
    bool changed = false;
    std::size_t before = 0, after = 0;
    std::string advice;  // "" when there is nothing to say
    std::string detail;  // for the debug log
  };

  // A request took a permit; `waiting`: requests queued behind the limit in its shard.
  void started(std::size_t waiting);
  // Its permit went back.
  void ended() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  // A request far later than the API's usual answer runs beside the limit (+1, after its ended())
  // or ended (-1): counted apart, so the limit's demand is that of the requests it holds.
  void straggling(int delta) { stragglers_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed); }
  // A request waits for a permit (+1) or stopped waiting (-1).
  void waiting(int delta) { waiting_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed); }
  // A parked shard (its share of the limit 0) runs a call it already held on its floor of one
  // permit (+1), or that call ended (-1). The calling shards leave it room: their shares are of
  // the limit less these. Beside the limit, a token bucket at its rate (400 a second, calls of
  // 5 ms) saw 3 calls a round at a limit of 2 after each pause and refused them.
  void parked_call(int delta) { parked_calls_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed); }
  std::size_t parked_calls() const { return parked_calls_.load(std::memory_order_relaxed); }
  // A request holding a permit waits for a connection (+1: the connections' cap, or the pace of
  // new ones) or stopped waiting (-1). While any does, the connections hold the calls back, not
  // the limit: those requests are not in flight for the limit's demand, and the requests waiting
  // for a permit are no demand on it (an API that closes every connection had the limit run to
  // its ceiling, a thousand calls waiting for connections looking in flight).
  void connection_waiting(int delta) {
    connection_waits_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed);
  }
  // A request holding a permit opens a connection (+1: connect, TLS handshake) or is done with it
  // (-1). Demand as any request in flight, but not at the server yet: slow start weighs answers a
  // second against the requests at the server (full_pipe.hpp).
  void connection_opening(int delta) {
    connection_openings_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed);
  }
  // A new connection took `took` to open (adaptive_limit::connection_opened).
  void connection_opened(std::chrono::microseconds took) {
    std::lock_guard lock(mutex_);
    limit_state_.connection_opened(took);
  }
  // An answer's connection was not kept for another request (HTTP/1.0, `Connection: close`).
  void closed_after_answer() { closed_after_answer_.fetch_add(1, std::memory_order_relaxed); }
  // A new connection's first request (its connect began at `opened_at`) was answered; `late`:
  // it had been found late (a straggler's lateness) before, which first_request_late() counted.
  // Every shard's counted, as a shard may have only the connections the server has not taken;
  // slow start's step waits for most of its new connections' answers
  // (adaptive_limit::new_connection_answered). One lock for both.
  void first_request_answered(clock::time_point opened_at, bool late);
  void first_request_late();
  // Whether those say the server takes no more connections (the client's straggler_watch.hpp:
  // unserved_connection): its late ones keep their permits, and connections_unserved() is told.
  bool takes_no_more_connections() const;
  // A connection to the origin answered its first request (+1), or one that had answered closed
  // (-1): every shard's.
  void connection_served(int delta) { served_open_.fetch_add(static_cast<std::size_t>(delta), std::memory_order_relaxed); }
  // The bound on connections open to the origin, every shard's (0: none): while the server takes
  // no more connections, those it served (the client's straggler_watch.hpp: connections_to_keep).
  std::size_t connection_cap() const { return connection_cap_.load(std::memory_order_relaxed); }
  // Decides it again (on a late first request, on a first answer while it holds): the bound now.
  std::size_t bound_connections();
  // A new connection (its connect began at `opened_at`) carried its first request
  // (adaptive_limit::new_connection_sent), or that request was dropped unacknowledged and goes
  // again on another (new_connection_unsent).
  void new_connection_sent(clock::time_point opened_at) {
    std::lock_guard lock(mutex_);
    limit_state_.new_connection_sent(opened_at);
  }
  void new_connection_unsent(clock::time_point opened_at) {
    std::lock_guard lock(mutex_);
    limit_state_.new_connection_unsent(opened_at);
  }
  // An answer whose first byte came `first_byte` after the request was written. Its status: 429
  // and 503 are the API refusing, and lower the limit, or move the pace once the limit is 1 (or
  // the origin is paced); 502 and 504 are overload, and lower the limit.
  // `said_when`: the refusal said when to come back (Retry-After...): its pause is honored
  // elsewhere, and nothing moves here; a 429's is heard with its pause (paused_by_api).
  // `straggler`: the request ran beside the limit (its latency is no sample of the server's).
  decision answered(std::chrono::microseconds first_byte, int status, bool said_when, clock::time_point now,
                    bool straggler = false);
  // The server (or the path to it) signalled overload without an answer.
  // `since`: as adaptive_limit::overloaded's.
  decision overloaded(limit_signal why, clock::time_point now, clock::time_point since = {});
  // Requests on new connections go unanswered (adaptive_limit::connections_unserved).
  decision connections_unserved(clock::time_point now);
  // The API refused with a word of when to come back, and the whole origin was paused `wait` for
  // it (the pause the processor took: honor_stop_signals, after the token meter and the
  // longest wait allowed had their say). A wait up to said_wait_quota is a refusal as any other
  // (a token bucket's Retry-After: 1: the calls went too fast): it lowers the limit or the pace
  // as answered() does for a bare one, and, since each such refusal stops every call, the limit
  // comes down by half at least and probes up again only after said_wait_hold waits
  // (said_wait_hold_most at most) for a probe a quarter up (adaptive_limit::hold_probes). A longer wait
  // is a quota spent: it says nothing of how many calls at once, and moves nothing.
  decision paused_by_api(int status, std::chrono::milliseconds wait, std::chrono::microseconds latency,
                         clock::time_point now);
  static constexpr std::chrono::seconds said_wait_quota{60};
  static constexpr int said_wait_hold = 20;
  static constexpr std::chrono::seconds said_wait_hold_most{60};
  // A new ceiling (the engine's concurrency changed).
  decision set_max(double max);
  // A shard's client reports how late its event loop runs lately (adaptive_limit::client_delay):
  // the origin's limit hears the largest, fading as it is not reported again.
  void client_delay(std::chrono::microseconds d);

  // Shard `index` sends no more (its dispatcher ended: the store has nothing left it could
  // claim): the shards still calling share the limit among themselves. Shards 64 and up are
  // always counted as calling.
  void shard_gone(std::size_t index);
  // Where shard `index` of `shards` stands among those still calling: its rank, and how many.
  struct calling_place {
    std::size_t rank = 0;
    std::size_t calling = 1;
  };
  calling_place place_of(std::size_t index, std::size_t shards) const;

  limit_view view() const;

  // Requests are what holds the calls back: the API was found to serve fewer than were sent (the
  // limit went down because its answers slowed, a queue, or it refused with 429/502-504, or a
  // pace was found; stays true for the run), or the limit sits at its ceiling (the user's
  // --concurrency). Until then more rows a request buy nothing: against the project's embeddings
  // server, which takes every request at once, growing to 400 rows cost its sub-second run about
  // a tenth (runs by turns); against Ollama's shape, serving a request at a time, 256 rows a
  // request ran at 1.2 times 100's rows a second (bench/results/embeddings-ollama.md). Which
  // decreases count: says_requests_scarce.
  bool requests_scarce() const {
    return requests_scarce_.load(std::memory_order_relaxed) ||
           static_cast<double>(limit_.load(std::memory_order_relaxed)) >= ceiling_.load(std::memory_order_relaxed);
  }

 private:
  decision decided(std::size_t before, std::uint64_t decreases_before, clock::time_point now);
  // A refusal (429/503) heard: the limit down, or the pace once the limit is 1. Under the mutex.
  // `paused`: it said when to come back, and every call waited (paused_by_api).
  decision refusal(int status, std::chrono::microseconds latency, clock::time_point now, bool paused = false);
  // The pace went down: what the client logs, and the operator's advice (once a minute).
  decision paced_down(int status, clock::time_point now);
  // takes_no_more_connections(), under the mutex.
  bool unserved_locked() const;

  const std::string origin_;
  mutable std::mutex mutex_;
  adaptive_limit limit_state_;
  rate_finder pace_state_;
  std::atomic<double> pace_{0};
  std::atomic<clock::rep> pace_next_{0};  // the next turn (steady clock ticks)
  std::atomic<std::uint64_t> sends_{0}, paced_waits_{0};
  std::atomic<std::size_t> limit_;
  std::atomic<double> ceiling_;
  std::atomic<std::int64_t> typical_us_{0};
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<std::size_t> waiting_{0};
  std::atomic<std::size_t> parked_calls_{0};
  std::atomic<std::size_t> connection_waits_{0};
  std::atomic<std::size_t> connection_openings_{0};
  std::atomic<std::uint64_t> closed_after_answer_{0};
  std::atomic<std::size_t> served_open_{0};
  std::atomic<std::size_t> connection_cap_{0};
  std::atomic<std::size_t> stragglers_{0};
  std::atomic<bool> requests_scarce_{false};
  std::atomic<std::uint64_t> gone_{0};  // the shards that send no more (bit `index`)
  double delay_us_ = 0;                 // client_delay(), under the mutex
  // Answers per second lately (for the advice), measured over 5 s or more.
  std::uint64_t answers_ = 0, answers_then_ = 0;
  // New connections' first requests lately, answered in time or found late (first_request_late).
  std::uint64_t first_served_ = 0, first_late_ = 0;
  clock::time_point answers_since_;
  double answers_per_s_ = 0;
  clock::time_point advised_at_{};
};

class origin_limits {
 public:
  // The run's limit of `origin` ("http://host:port"), made with `s` on first use.
  std::shared_ptr<origin_limit> get(const std::string& origin, const adaptive_settings& s);
  // Per origin. Empty when no client limits its requests adaptively.
  std::vector<std::pair<std::string, limit_view>> totals() const;
  // dibs_api_concurrency_limit and its companions, labelled by origin.
  void prometheus(prometheus_writer& w) const;
  // [{"origin":...,"limit":N,...}], for /status and the summary.
  std::string json() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<origin_limit>> by_origin_;
};

}  // namespace dibs::http
