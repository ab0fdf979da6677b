// The flags that name a store and its fields, shared by `enrich`, `seed` and `status`, and the
// store they open: `--store mongodb://...` (any standard connection string).
#pragma once

#include <adapters/mongo/mongo_store.hpp>

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace dibs::cli {

struct store_flags {
  std::string store;
  std::string db = "test";
  std::string collection = "message";
  std::string source = "originatingIp";
  std::string target = "location";
  std::string lock_field = "lock";
  std::string claim = "batch";
  std::size_t db_threads = 4;

  void add_to(CLI::App& cmd, bool with_claim);
  // Opens the store (connects, measures the clock, creates indexes). Throws with a clear message.
  std::shared_ptr<mongo::mongo_store> open_mongo(bool create_indexes = true) const;
};

}  // namespace dibs::cli
