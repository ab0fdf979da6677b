// The flags that name a store and its fields, shared by `enrich`, `seed` and `status`, and the
// store they open: `--store mongodb://...` (any standard connection string) or
// `--store 'mysql://user:pass@host:port/db?table=jobs'` or `--store jsonl:IN.jsonl --out OUT.jsonl`.
#pragma once

#include <dibs/admin_store.hpp>

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace dibs::cli {

struct store_flags {
  std::string store;
  std::string out;  // file mode
  std::string db = "test";
  std::string collection = "message";
  std::string source = "originatingIp";
  std::string target = "location";
  std::string lock_field = "lock";
  std::string claim = "batch";
  std::size_t db_threads = 4;
  std::string on_done = "mark";

  void add_to(CLI::App& cmd, bool with_claim);
  // Opens the store (connects; MongoDB: measures the clock, creates indexes; SQL: creates the
  // table if missing). Throws with a clear message that never shows the password.
  std::shared_ptr<admin_store> open(bool create_schema = true) const;
};

}  // namespace dibs::cli
