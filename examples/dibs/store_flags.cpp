#include "store_flags.hpp"

#include <adapters/jsonl/jsonl_store.hpp>
#include <adapters/mongo/mongo_store.hpp>
#include <adapters/mysql/mysql_store.hpp>
#include <adapters/postgres/open_postgres_store.hpp>

#include <dibs/uri_redact.hpp>

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace dibs::cli {

void store_flags::add_to(CLI::App& cmd, bool with_claim) {
  cmd.add_option("--store", store,
                 "the store: mongodb://... (a standard MongoDB connection string), "
                 "mysql://USER:PASS@HOST:PORT/DB?table=TABLE, postgresql://USER:PASS@HOST:PORT/DB?table=TABLE, or jsonl:IN.jsonl (a JSON Lines file; with --out)")
      ->required();
  cmd.add_option("--out", out, "file mode: where the enriched lines go (OUT.journal holds the progress)");
  cmd.add_option("--db", db, "MongoDB: database")->capture_default_str();
  cmd.add_option("--collection", collection, "MongoDB: collection")->capture_default_str();
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

std::shared_ptr<admin_store> store_flags::open(bool create_schema) const {
  if (store.rfind("jsonl:", 0) == 0) {
    jsonl::jsonl_options o;
    o.in = store.substr(6);
    o.out = out;
    o.source = source;
    o.target = target;
    o.read_only = !create_schema || out.empty();
    if (o.in.empty()) throw std::invalid_argument("--store jsonl:PATH: no path");
    return std::make_shared<jsonl::jsonl_store>(o);
  }
  if (store.rfind("mysql://", 0) == 0) {
    if (on_done != "mark" && on_done != "delete")
      throw std::invalid_argument("--on-done '" + on_done + "': expected mark or delete");
    if (claim != "batch" && claim != "skip-locked")
      throw std::invalid_argument("--claim '" + claim + "': MySQL/MariaDB stores claim with skip-locked only");
    sql::mysql_options o;
    o.uri = store;
    o.source = source;
    o.target = target;
    o.done = on_done == "delete" ? sql::on_done::remove : sql::on_done::mark;
    o.threads = db_threads;
    o.create_table = create_schema;
    return std::make_shared<sql::mysql_store>(o);
  }
  if (pg::is_postgres_uri(store)) return pg::open_postgres_store(store, {source, target, on_done, claim, create_schema});
  if (store.rfind("mongodb://", 0) != 0 && store.rfind("mongodb+srv://", 0) != 0)
    throw std::invalid_argument("--store '" + redact_uri(store) +
                                "': expected mongodb://HOST[:PORT]/..., mysql://USER:PASS@HOST:PORT/DB?table=TABLE, "
                                "postgresql://USER:PASS@HOST:PORT/DB?table=TABLE or jsonl:FILE");
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
  o.create_indexes = create_schema;
  return std::make_shared<mongo::mongo_store>(o);
}

}  // namespace dibs::cli
