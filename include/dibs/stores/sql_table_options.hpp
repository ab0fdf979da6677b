// What both SQL stores (MySQL/MariaDB: mysql_options, PostgreSQL: pg_options) are told about the
// user's table: where it is, the columns dibs reads and writes, what becomes of a done row, and
// what opening may do to the table. Each dialect's options add their own.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/recorded_settings.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace dibs::sql_common {

struct sql_table_options {
  std::string uri;  // mysql://user:pass@host:port/db?table=jobs, postgresql://... (or postgres://)
  std::string source = dibs::ipapi::source_field;
  std::string target = dibs::ipapi::target_field;
  std::vector<std::string> mapped_columns;  // the mapped columns (table_names::mapped)
  std::string map;  // the mapping's text (dibs/field_mapping.hpp): names, pointers, SQL types; recorded by dibs init
  std::vector<std::string> more_columns;    // the other columns a request reads (table_names::more)
  on_done done = on_done::mark;
  std::chrono::seconds connect_timeout{5};
  std::chrono::seconds io_timeout{60};
  // A missing table: create it (true; dibs seed, dibs init, tests) or refuse naming it (false:
  // dibs enrich, dibs status). An existing table that lacks dibs's columns or its index: add them
  // (add_columns: dibs init) or refuse with the statements that would (the dialect's table schema).
  bool create_table = true;
  bool add_columns = false;
  // dibs init: the target column is new (the table has none of that name yet); without it a
  // missing target column is refused, with the columns there (a misspelled target would make
  // every row pending).
  bool target_is_new = false;
  // dibs init's record (recorded_settings.hpp): applied to source, target, done and the mapping
  // before the table is checked; written once the table is ready when settings.record (dibs init).
  settings_use settings;
};

}  // namespace dibs::sql_common
