// What every part of one MongoDB store shares: the names it works with, the connection, the
// server's clock, the id sampler and the conflict counter. Owned by mongo_store; the claimers,
// lease keepers, admin and test hooks hold a reference.
#pragma once

#include <adapters/mongo/clock_sync.hpp>
#include <adapters/mongo/connection.hpp>
#include <adapters/mongo/id_sampler.hpp>
#include <dibs/stores/mongo_store.hpp>

#include <atomic>
#include <cstdint>
#include <string>

namespace dibs::mongo {

struct store_context {
  // Parses the URI and makes the pool; no round trip (clock.measure() is the first).
  explicit store_context(const mongo_options& o)
      : opts(o),
        lock_collection(o.lock_collection.empty() ? o.collection + ".lock" : o.lock_collection),
        conn(o.uri, o.threads + 2, o.count_commands),
        clock(conn, o.clock_refresh) {}

  const field_names& names() const { return opts.names; }
  collection_ptr documents(mongoc_client_t* c) const { return primary_collection(c, opts.db, opts.collection); }
  collection_ptr locks(mongoc_client_t* c) const { return primary_collection(c, opts.db, lock_collection); }

  // Set once, before the store's first use: start() applies dibs init's record to the names.
  mongo_options opts;
  const std::string lock_collection;  // lock-collection strategy: where the locks live
  connection conn;
  clock_sync clock;
  id_sampler sampler;
  std::atomic<std::uint64_t> conflicts{0};  // claim candidates someone else took first
};

// What one blocking call of the store works with: a client of the pool and the store's two
// collections on it (handles only: no round trip). Members end in reverse order, so the
// collections are gone before the client goes back to the pool.
struct store_session {
  explicit store_session(const store_context& ctx)
      : client(ctx.conn.client()), documents(ctx.documents(client.get())), locks(ctx.locks(client.get())) {}

  pooled_client client;
  collection_ptr documents;
  collection_ptr locks;  // the lock-collection strategy's locks
};

}  // namespace dibs::mongo
