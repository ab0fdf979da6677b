// The MongoDB checker, from the stand-in's write log (dibsWatch/dibsWrites: every update that
// leaves a document done or failed, whatever the values, every new lease and every delete, each
// with the lease the document held, the lease the update's filter named -- the writer's own --
// and, for the lock-collection strategy, the lock document at that moment) and from the
// documents themselves. A real mongod keeps no write log: the checks that need it are skipped,
// and said so loudly; the others still run.
#pragma once

#include "chaos_common.hpp"

#include <dibs/stores/mongo_store.hpp>

#include <string>

namespace dibs::chaos {

struct mongo_check_input {
  mongo::mongo_store* store = nullptr;
  std::string collection;
  std::size_t items = 0;
  int max_attempts = 8;
  double poison_rate = 0;
  std::uint64_t poison_seed = 0;
  bool lock_collection = false;  // the strategy: filters carry no token, the lock lives elsewhere
  bool write_log = true;
};

// Turns the write log on; false against a server without one (a real mongod).
bool watch_writes(const mongo_check_input& in);
void inject_mongo_violations(const mongo_check_input& in);
void check_mongo(const mongo_check_input& in, int round, tally& t);

}  // namespace dibs::chaos
