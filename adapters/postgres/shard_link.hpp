// A shard's connection to one PostgreSQL store, and the turns its coroutines take on it.
//
// Each io_context that calls a store (a shard, or a test's private one) gets its own link, kept
// by a service of that io_context: it lives exactly as long as the io_context, so a connection
// never outlives the thread that drives it, and a store shared by many shards needs no lock on
// its hot path. A shard's claims, flushes and renewals share the one connection, pipelined
// (pg_connection::exec_pipelined); the turns below are for (re)connecting, one at a time.
#pragma once

#include <adapters/postgres/pg_connection.hpp>

#include <dibs/net.hpp>

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <deque>
#include <memory>

namespace dibs::pg {

struct shard_link {
  // Null until the first call, and after a lost connection; each call holds it while it runs.
  std::shared_ptr<pg_connection> conn;
  bool busy = false;
  std::deque<net::steady_timer*> waiters;  // coroutines waiting for their turn, first come first
};

// The link of store `serial` in the calling coroutine's io_context (made on first use).
std::shared_ptr<shard_link> link_for(const net::any_io_executor& ex, std::uint64_t serial);

// Waits until the link is free and takes it. Throws if the coroutine is cancelled meanwhile.
awaitable<void> take_turn(std::shared_ptr<shard_link> link);
// Frees the link and wakes the next waiter.
void end_turn(shard_link& link);

}  // namespace dibs::pg
