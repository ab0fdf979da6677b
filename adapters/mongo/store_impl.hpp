// mongo_store's parts, for mongo_store.cpp (the wiring) and test_hooks.cpp.
#pragma once

#include <adapters/mongo/change_watcher.hpp>
#include <adapters/mongo/claimer.hpp>
#include <adapters/mongo/lease_keeper.hpp>
#include <dibs/stores/mongo_store.hpp>
#include <adapters/mongo/store_context.hpp>

#include <memory>

namespace dibs::mongo {

struct mongo_store::impl {
  explicit impl(const mongo_options& o);

  store_context ctx;                      // first: the others hold references into it
  std::unique_ptr<claimer> claims;        // the strategy, chosen once
  std::unique_ptr<lease_keeper> leases;   // where its leases live
  change_watcher watcher;
  bool lock_collection_found = false;  // detect_lock_collection: the lock collection holds locks
};

}  // namespace dibs::mongo
