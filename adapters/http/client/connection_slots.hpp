// `max_connections`: at most `limit` requests of one connection pool hold a connection at a
// time; the others wait for one, first come first served. A request holds its slot from before
// it takes an idle connection (or opens one) until its connection is back in the pool or closed,
// so the pool never has more than `limit` connections open: a new one is opened only when none
// is idle, and an idle one always gave its slot back. Real APIs refuse thousands of sockets from
// one client; pipelines beyond the limit simply queue here.
//
// One pool, one thread (a shard): not thread-safe. Waiting is cancellable (shutdown, an abandoned
// call): a cancelled waiter leaves the queue; a slot granted to it at that moment goes on to
// the next waiter when its holder unwinds.
#pragma once

#include <dibs/net.hpp>

#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>

namespace dibs::http {

// A shard's part of a limit for the whole process (each shard has its own client): `total`
// split as evenly as can be, the remainder to the first shards. At least 1, so a process with
// more shards than `total` connections would exceed it: the CLI runs no more shards than that.
std::size_t connection_share(std::size_t total, std::size_t shards, std::size_t index);
// A shard's part of an origin's adaptive limit on calls: the limit goes to as few shards as it
// gives at least `calls_per_shard` each (the first ones; evenly among them), and the others get
// 0 and park (processor::parked): a limit of 1 on two shards would otherwise run 2. Why so few: a
// handful of calls needs no second thread, and a small API on the same machine loses a core to
// it (Python's http.server with keep-alive, 20,000 items at the default limit: 11,600-12,600
// answers/s on one shard, 7,300-8,200 on two). A limit that grows past that is spread again, so
// a fast API that wants more threads gets them as the limit climbs.
// `most_per_shard`: what one shard may run at all (its part of the engine's concurrency and of
// max_connections): the limit is spread over enough shards that none is asked for more.
// `beside`: calls the parked shards run on their floor of one (origin_limit::parked_call), left
// out of what the calling shards share, each of which keeps one at least.
std::size_t limit_share(std::size_t total, std::size_t shards, std::size_t index,
                        std::size_t most_per_shard = SIZE_MAX, std::size_t beside = 0);
inline constexpr std::size_t calls_per_shard = 4;
// How many shards limit_share gives calls to (the first ones): 1 to `shards`.
std::size_t calling_shards(std::size_t total, std::size_t shards, std::size_t most_per_shard = SIZE_MAX);
// A shard's part of the new connections an origin may open now (connect_window.hpp): `allowed`
// split among the `calling` shards, 1 for each other one (a parked shard finishing what it holds).
std::size_t connect_share(std::size_t allowed, std::size_t calling, std::size_t index);

// A shard's part of the origin's bound on open connections (origin_limit::bound_connections: the
// connections a server that takes no more of them served): `cap` split evenly among the `calling`
// shards, 1 for each other one (a parked shard finishing what it holds). Split as the calls are
// (limit_share: four a shard at least), four shards calling against a bound of 8 were given 4,
// 4, 1 and 1: 10 connections where the server served 8.
std::size_t bound_share(std::size_t cap, std::size_t calling, std::size_t rank);

// A limit that never binds, under which the slots in use are still counted (a limit of 0
// counts none): the bound on open connections while none holds (host_pool::opened).
inline constexpr std::size_t no_connection_cap = std::size_t{1} << 40;

class connection_slots {
 public:
  explicit connection_slots(std::size_t limit = 0) : limit_(limit) {}  // 0: unlimited
  connection_slots(connection_slots&&) = default;
  connection_slots& operator=(connection_slots&&) = default;

  // A slot held by one request; given back (to the first waiter, or to the pool) when it ends.
  class held {
   public:
    held() = default;
    held(held&& o) noexcept : owner_(o.owner_) { o.owner_ = nullptr; }
    held& operator=(held&& o) noexcept;
    ~held() { reset(); }
    void reset();
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    friend class connection_slots;
    explicit held(connection_slots* owner) : owner_(owner) {}
    connection_slots* owner_ = nullptr;
  };

  // A slot now, without waiting: set when one is free and nobody waits before us (or without a
  // limit, when it is empty but true: nothing to give back).
  bool try_take(held& out);
  // How a wait ended: a slot (in `out`), woken without one (wake_first), or cancelled.
  enum class wait_end { slot, woken, cancelled };
  // Waits for a slot (first come first served).
  awaitable<wait_end> wait(held& out);
  // Wakes the first waiter without a slot, for something it may use instead (a kept-alive
  // connection back in the pool, for a request waiting to open one): false when nobody waits.
  bool wake_first();

  // A new limit: waiters get the slots it adds at once; when it is lower, slots in use go away
  // as they are given back (nobody is cut short). The adaptive limit's permits use this.
  void set_limit(std::size_t limit);
  std::size_t limit() const { return limit_; }
  std::size_t in_use() const { return in_use_; }
  std::size_t waiting() const { return queue_.size(); }

 private:
  struct waiter {
    net::steady_timer* timer;
    bool granted = false;
    bool woken = false;  // off the queue without a slot (wake_first)
  };
  void give_back();
  void grant_front();

  std::size_t limit_;
  std::size_t in_use_ = 0;
  std::deque<waiter*> queue_;
};

}  // namespace dibs::http
