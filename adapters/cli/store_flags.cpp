#include "store_flags.hpp"

#include "did_you_mean.hpp"

#include <adapters/stores/open_store.hpp>

#include <dibs/missing_table_error.hpp>

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace dibs::cli {

void store_flags::add_to(CLI::App& cmd, bool with_claim) {
  cmd.add_option("--store", store,
                 "the store: mongodb://HOST[:PORT]/DB?collection=COLLECTION (a standard MongoDB connection string), "
                 "mysql://USER:PASS@HOST:PORT/DB?table=TABLE, postgresql://USER:PASS@HOST:PORT/DB?table=TABLE, "
                 "or jsonl:IN.jsonl (a JSON Lines file; with --out)")
      ->required();
  cmd.add_option("--out", out, "file mode: where the enriched lines go (OUT.journal holds the progress)");
  cmd.add_option("--db", db, "MongoDB: database, overriding the URI's path (default: the path, else test)");
  cmd.add_option("--collection", collection,
                 "MongoDB: collection, overriding the URI's collection= (default: collection=, else message)");
  cmd.add_option("--source", source, "field (column) read for the API call; MongoDB: dotted paths allowed")
      ->capture_default_str();
  cmd.add_option("--target", target, "field (column) the API's answer is written to; null means pending")
      ->capture_default_str();
  cmd.add_option("--lock-field", lock_field, "MongoDB: field that holds the lease")->capture_default_str();
  cmd.add_option("--on-done", on_done, "MySQL, PostgreSQL: mark (keep finished rows with their result) or delete (queue)")
      ->capture_default_str();
  if (with_claim)
    cmd.add_option("--claim", claim,
                   "claim strategy: MongoDB update-find, find-and-modify, batch, lock-collection; "
                   "MySQL and PostgreSQL skip-locked (their only one)")
        ->capture_default_str();
  cmd.add_option("--db-threads", db_threads, "threads (and pooled connections) for database calls")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
      ->capture_default_str();
}

bool store_flags::file_mode() const { return parse_store_uri(store).kind == store_kind::jsonl; }

std::shared_ptr<admin_store> store_flags::open(bool create_schema, table_use use) const {
  store_options o;
  o.source = source;
  o.target = target;
  o.lock_field = lock_field;
  o.claim = claim;
  o.on_done = on_done;
  o.out = out;
  o.database = db;
  o.collection = collection;
  o.threads = db_threads;
  o.create_schema = create_schema;
  o.create_table = use != table_use::existing;
  o.add_columns = use == table_use::prepare;
  try {
    return open_store(store, o);
  } catch (const missing_table_error& e) {
    // The store knows what exists; the name the user probably meant is the CLI's to pick.
    throw std::invalid_argument(e.message(nearest_name(e.name, e.existing)));
  }
}

}  // namespace dibs::cli
