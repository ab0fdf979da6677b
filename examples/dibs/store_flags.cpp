#include "store_flags.hpp"

#include <dibs/uri_redact.hpp>

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace dibs::cli {

void store_flags::add_to(CLI::App& cmd, bool with_claim) {
  cmd.add_option("--store", store, "the store: mongodb://... (a standard MongoDB connection string)")->required();
  cmd.add_option("--db", db, "database")->capture_default_str();
  cmd.add_option("--collection", collection, "collection")->capture_default_str();
  cmd.add_option("--source", source, "field read for the API call (dotted paths allowed)")->capture_default_str();
  cmd.add_option("--target", target, "field the API's answer is written to; null means pending")->capture_default_str();
  cmd.add_option("--lock-field", lock_field, "field that holds the lease")->capture_default_str();
  if (with_claim)
    cmd.add_option("--claim", claim, "claim strategy: update-find, find-and-modify, batch, lock-collection")
        ->capture_default_str();
  cmd.add_option("--db-threads", db_threads, "threads (and pooled connections) for database calls")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
      ->capture_default_str();
}

std::shared_ptr<mongo::mongo_store> store_flags::open_mongo(bool create_indexes) const {
  if (store.rfind("mongodb://", 0) != 0 && store.rfind("mongodb+srv://", 0) != 0) {
    if (store.rfind("mysql://", 0) == 0)
      throw std::invalid_argument("--store mysql://... is not supported yet (the MySQL/MariaDB adapter is planned)");
    throw std::invalid_argument("--store '" + redact_uri(store) + "': expected mongodb://HOST[:PORT]/...");
  }
  auto strategy = mongo::parse_strategy(claim);
  if (!strategy)
    throw std::invalid_argument("--claim '" + claim + "': expected update-find, find-and-modify, batch or lock-collection");
  mongo::mongo_options o;
  o.uri = store;
  o.db = db;
  o.collection = collection;
  o.names.source = source;
  o.names.target = target;
  o.names.lock = lock_field;
  o.strategy = *strategy;
  o.threads = db_threads;
  o.create_indexes = create_indexes;
  return std::make_shared<mongo::mongo_store>(o);
}

}  // namespace dibs::cli
