// A request whose answer is far later than the origin's usual answers stops counting against its
// adaptive limit (adaptive_limit.hpp), so the API's few slow items do not hold every permit.
//
// Why: behind a slow tail (a few items that take seconds while the rest take milliseconds) a
// limit of 8 is soon 8 slow items in flight and nothing else: the fast items wait, no answer
// comes to measure, and slow start sits at 2 and 4 for seconds (measured: 0.51 of the best fixed
// concurrency). A straggler says nothing of the server's load (its lower-quartile latency does),
// so once it is `straggler_after` late its permit goes to the next request. Bounded twice:
//   - by the ceiling (concurrency): the limit and the stragglers together never exceed it, as a
//     fixed concurrency would not;
//   - by four stragglers per permit, unless few of the requests turn straggler: a server that
//     stalls altogether (every answer late) looks like a slow tail until its answers come, and
//     its load should not climb to the ceiling meanwhile. A slow tail is a small share of the
//     requests (2% of items taking 6 s), a stall all of them: past four per permit, stragglers
//     are released only while under a fifth of the recent requests turned straggler. Four per
//     permit alone was too few behind a long tail: 2% of items taking 6 s at 1,300 answers a
//     second are 160 stragglers at once beside a limit of 35, and the rest held permits again
//     (measured: 0.28 of a fixed 256); one per permit, earlier, was too few for 3% taking 2 s.
// A pinned (fixed) concurrency has no permits, and nothing here applies.
//
// No timer per request (a request a few microseconds long would pay for arming and cancelling
// one): the requests holding permits wait in one queue per origin, in the order they were sent,
// and one timer per origin wakes when the oldest is due.
// Internal to the client.
#pragma once

#include <algorithm>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace dibs::http {

// How late an answer makes its request a straggler, from the origin's typical time to first byte
// (the moving average of its round trips' lower quartiles; 0 before any): eight times it, and no
// less than 50 ms (a busy machine's scheduler is not a slow item). 0: not yet (nothing is known
// of the origin's usual answers).
std::chrono::milliseconds straggler_after(std::chrono::microseconds typical);

// Whether one more request may stop counting against the limit: `stragglers` already did, beside
// a limit of `limit` under a ceiling of `ceiling` (this client's shares of them); `share`: of the
// recent requests, the share that turned straggler (straggler_share).
inline constexpr std::size_t stragglers_per_permit = 4;
inline constexpr double tail_share = 0.2;
inline bool may_release(std::size_t stragglers, std::size_t limit, std::size_t ceiling, double share = 1) {
  return limit + stragglers < ceiling && (stragglers < stragglers_per_permit * limit || share < tail_share);
}

// Whether a late request that is the first on its connection, to an origin that keeps its
// connections (`kept` of its `answers` so far left theirs open), may be one the server has not
// taken: Apache's prefork (a worker a connection, kept until the client is idle a second) leaves
// the connections past its workers in its listen queue, request and all, and nothing looks amiss
// but their lateness. Given its permit back as a straggler, such a request made room for one more
// call, on one more new connection into the same queue: against 8 workers the limit ran to 1,000.
// So it keeps its permit until its answer, and slow start ends (adaptive_limit::
// connections_unserved), once the new connections' first requests found late lately (`late`,
// this one among them) are three or more and a third or more of those judged (the rest, `served`,
// answered before they were late): 8 workers behind 16 connections leave 8 of 14 new ones
// unserved; behind a slow tail of 2% of the items, 2% of them are late, and run beside the limit
// as any straggler (a slow item held its permit for its 6 s, three permits of a limit of 9 at a
// time: 0.98 -> 0.94 of fixed, in the simulated family). Where the origin closes its connections
// (HTTP/1.0, `Connection: close`) every request is the first on its own: the rule does not
// apply; nor before any answer.
inline bool unserved_connection(std::uint64_t answers, std::uint64_t kept, std::uint64_t late, std::uint64_t served) {
  const bool keeps_connections = answers > 0 && 2 * kept >= answers;
  return keeps_connections && late >= 3 && 2 * late >= served;
}

// How many connections to an origin its clients may hold open (`cap`, 0: no bound) while the
// origin takes no more connections (`unserved`: unserved_connection), `served_open` of those
// open now (every shard's) having answered once. Against Apache's prefork each connection past
// its workers waits in its listen queue, and each connection the client keeps idle holds a
// worker until it has been idle a second (KeepAliveTimeout): with 9 connections to 8 workers, a
// fixed 9 calls got 395 answers a second where 8 got 695, and the adaptive limit (16-31 calls,
// as many connections) 210, its workers closing 16 idle connections a run. So no connection is
// opened past the ones the server served: more calls wait for one of them (calls waiting for a
// connection are no demand on the limit). The bound never falls while it holds (a served
// connection the server closed, after its last request, is replaced, not given up), rises as
// more are served, and goes once the new connections' first calls are answered in time again.
inline std::size_t connections_to_keep(bool unserved, std::size_t cap, std::size_t served_open) {
  if (!unserved) return 0;
  return std::max({cap, served_open, std::size_t{1}});
}

// New connections' first requests lately, `served` (answered before they were late) and `late`
// (unserved_connection's): told after each is counted, forgets the older half past 512, so that
// a cold start's early lateness fades, and a server that stops taking connections hours into a
// run shows within a few hundred new connections.
inline void age_first_requests(std::uint64_t& served, std::uint64_t& late) {
  if (served + late < 512) return;
  served /= 2;
  late /= 2;
}

// Of the requests sent lately (the last thousand or so), the share that turned straggler.
class straggler_share {
 public:
  void sent() { age(++sent_); }
  void turned() { ++turned_; }
  double share() const { return sent_ > 0 ? turned_ / sent_ : 1; }

 private:
  void age(double n) {
    if (n < 2048) return;
    sent_ /= 2;  // the older half forgotten
    turned_ /= 2;
  }
  double sent_ = 0, turned_ = 0;
};

// A request in the queue; it leaves it when it ends (its owner's destructor) or turns straggler.
struct straggler_entry {
  std::chrono::steady_clock::time_point since;  // its request was sent
  straggler_entry* prev = nullptr;
  straggler_entry* next = nullptr;
  bool queued = false;
};

// The requests of one origin holding permits, oldest first (intrusive: no allocation).
class straggler_queue {
 public:
  void push(straggler_entry& e);
  void remove(straggler_entry& e);  // no-op when it is not queued
  straggler_entry* oldest() const { return head_; }
  bool empty() const { return head_ == nullptr; }

 private:
  straggler_entry* head_ = nullptr;
  straggler_entry* tail_ = nullptr;
};

}  // namespace dibs::http
