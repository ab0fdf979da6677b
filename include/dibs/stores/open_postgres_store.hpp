// Opening a PostgreSQL store from what a command line says: the one place that turns flags into
// pg_options, so the CLI (or dibs::open_store) needs one line to reach it.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/admin_store.hpp>
#include <dibs/recorded_settings.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace dibs::pg {

// postgresql://... or postgres://...
bool is_postgres_uri(std::string_view uri);

struct pg_flags {
  std::string source = dibs::ipapi::source_field;
  std::string target = dibs::ipapi::target_field;
  std::string on_done = "mark";    // mark | delete
  std::string claim = "skip-locked";  // skip-locked (or "batch", the CLI's default): its only strategy
  bool create_schema = true;        // create the table and its index when missing
  bool add_columns = false;         // add dibs's missing columns and index to an existing table
  bool target_is_new = false;       // with add_columns: the target column is new (else refused when missing)
  settings_use settings;            // dibs init's record (pg_settings.cpp): read, and written when settings.record
  std::vector<std::string> mapped_columns;  // --map's (table_names::mapped)
  std::string map;  // --map's text (dibs/field_mapping.hpp): names, pointers, SQL types; recorded by dibs init
  std::vector<std::string> more_columns;    // the other columns a request reads
};

// Throws std::invalid_argument for a bad flag or URI, dibs::pg::pg_error when the server can't be
// reached, dibs::missing_table_error when the table is missing (create_schema false),
// std::invalid_argument when it lacks dibs's columns (add_columns false); neither message holds the password.
std::shared_ptr<admin_store> open_postgres_store(const std::string& uri, const pg_flags& flags);

}  // namespace dibs::pg
