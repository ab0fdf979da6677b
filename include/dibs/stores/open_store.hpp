// A store from its URI: the one place a program turns `store URI` into a store (the CLI, the
// claim probe, the chaos driver and the tests all come here). The grammar: store_uri.hpp.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/stores/store_uri.hpp>

#include <dibs/admin_store.hpp>
#include <dibs/recorded_settings.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace dibs {

struct store_options {
  std::string source = dibs::ipapi::source_field;  // field (column) the processor reads; MongoDB: dotted paths
  std::string target = dibs::ipapi::target_field;       // field (column) the answer goes to; null means pending
  // More fields each item hands the processor (a request's headers and body): JSON Lines and
  // MongoDB read them; the SQL stores read one column and refuse them (setting_error "body").
  std::vector<std::string> more_fields;
  // map's fields (SQL: columns), where each mapped value goes besides the target.
  std::vector<std::string> mapped_fields;
  // map's text (dibs/field_mapping.hpp): with SQL types, which dibs init adds missing columns
  // of; recorded by dibs init (without the types) and used when no map is given.
  std::string map;
  std::string lock_field = "_dibs";       // MongoDB: the field holding the lease (mongo_names.hpp)
  // MongoDB: update-find, find-and-modify, batch, lock-collection; MySQL: skip-locked (batch
  // names the default, so one value fits every store).
  std::string claim = "batch";
  std::string on_done = "mark";           // MySQL: mark (keep finished rows) or delete (a queue)
  std::string out;                        // JSON Lines: where the enriched lines go ("" = read only)
  std::string id_field;                   // JSON Lines: the member whose value names each line ("" = its number)
  // MongoDB: when set, these override the URI's path and ?collection= (the CLI's db and
  // collection); with neither, test.message.
  std::string database, collection;
  std::size_t threads = 4;                // offload threads (and pooled connections)
  // false: open to look only (dibs status): no indexes, no table, no journal created.
  bool create_schema = true;
  // The SQL table (MongoDB: the collection) that the URI names, when it is missing: created
  // (create_table, with create_schema; dibs seed, dibs init new_table, programs and tests) or
  // refused by name (dibs enrich, dibs status, dibs init without new_table:
  // dibs::missing_table_error, whose advice says which). An existing SQL table that lacks
  // dibs's columns or its claim index: they are added (add_columns: dibs init) or the table is
  // refused with the ALTER TABLE that would add them.
  bool create_table = true;
  bool add_columns = false;
  // MongoDB: count the commands sent (mongo_store::statements_sent; the SQL stores always count).
  bool count_commands = false;
  // What `dibs init` recorded with the table or collection (dibs/recorded_settings.hpp): read and
  // applied to the settings the user did not give (their flags refused when they contradict it),
  // or, with settings.record (dibs init), recorded once the table is ready. settings.result says
  // what was in effect.
  settings_use settings;
  // The target is new: MongoDB, no document has the field yet; SQL (with add_columns), the table
  // has no such column yet. Without it such a collection is refused (a forgotten or misspelled
  // target would make every document pending again), and so is a table by dibs init (by the
  // others when only that column is missing). MongoDB: dibs init's record of this target counts
  // as the user's word.
  bool target_is_new = false;
};

// Connects (MongoDB: measures the clock, creates the claim indexes; SQL: checks the table, see
// create_table; a file: reads it and its journal). Throws setting_error naming the setting for a bad
// URI or option (the URI shown only redacted), the store's own errors when it can't be reached.
std::shared_ptr<admin_store> open_store(const std::string& uri, const store_options& o = {});

}  // namespace dibs
