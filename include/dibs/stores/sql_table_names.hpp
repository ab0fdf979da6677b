// The user's table as dibs names it, for either SQL dialect (MySQL/MariaDB: adapters/mysql,
// PostgreSQL: adapters/postgres): the table, the source and target columns, and the key rows
// are addressed by, of the dialect's own kind (`Key`: its row_key).
//
// Row states:   pending  target NULL, failed_at NULL, lock_token NULL
//               leased   target NULL, failed_at NULL, lock_by/lock_token/lock_until set
//               done     target set (or the row deleted, with on_done delete)
//               failed   failed_at set, error and http_status recorded
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/recorded_settings.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace dibs::sql_common {

template <class Key>
struct table_names {
  std::string table = "jobs";
  std::string source = dibs::ipapi::source_field;
  std::string target = dibs::ipapi::target_field;
  Key key;  // the column rows are addressed by (the table's own key, or dibs's `id`)
  // map's columns: a completion sets each from the member of that name of the answer it writes
  // to the target (the mapped values), converted to the column's type by the server; a value
  // the column can't hold makes the server refuse that row, which then fails alone with its reason.
  std::vector<std::string> mapped;
  // Each mapped column's SQL type when one was given (map 'lat=/loc/lat:DOUBLE PRECISION'): dibs
  // init adds such a column when the table lacks it. "" (or no entry) when none was given.
  std::vector<std::string> mapped_types;
  // The other columns a request reads (a url, header or body field besides the source):
  // the claim returns them, each in a cell read by its type (adapters/sql/row_fields.hpp).
  // more_types[i] is more[i]'s type as the server's catalog spells it, once the store has read the table.
  std::vector<std::string> more;
  std::vector<std::string> more_types;
  // The source is a JSON column (PostgreSQL json/jsonb, MySQL JSON, MariaDB's LONGTEXT that may
  // be one): read through that object too, so a body copies its object, not a string of its text.
  bool source_typed = false;
  std::string source_type;  // the source's type as the catalog spells it, once read
  // The columns the claim reads by their types: the source when typed, then `more`; and their types.
  std::vector<std::string> typed_columns() const {
    std::vector<std::string> out;
    if (source_typed) out.push_back(source);
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  std::vector<std::string> typed_column_types() const {
    std::vector<std::string> out;
    if (source_typed) out.push_back(source_type);
    out.insert(out.end(), more_types.begin(), more_types.end());
    out.resize(typed_columns().size());
    return out;
  }
};

// What becomes of a done row: its target set (mark), or the row deleted (remove: on_done delete).
enum class on_done { mark, remove };

// What both SQL stores (MySQL/MariaDB: mysql_options, PostgreSQL: pg_options) are told about the
// user's table: where it is, the columns dibs reads and writes, what becomes of a done row, and
// what opening may do to the table. Each dialect's options add their own.
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


// A column dibs keeps its claims in: its name, and its definition as CREATE TABLE and ALTER TABLE
// ... ADD COLUMN write it. Each dialect lists its own (dibs_columns), once for both statements.
using column_definition = std::pair<std::string, std::string>;

// The mapped columns that have a type, as CREATE TABLE and ADD COLUMN write them: `quote(name) TYPE NULL`.
template <class Key, class Quote>
std::vector<column_definition> mapped_column_definitions(const table_names<Key>& n, Quote quote) {
  std::vector<column_definition> out;
  for (std::size_t i = 0; i < n.mapped.size() && i < n.mapped_types.size(); ++i)
    if (!n.mapped_types[i].empty()) out.emplace_back(n.mapped[i], quote(n.mapped[i]) + " " + n.mapped_types[i] + " NULL");
  return out;
}

// CREATE TABLE IF NOT EXISTS `quoted_table` (one of `lines` a line: columns, then keys) `suffix`.
std::string create_table_statement(const std::string& quoted_table, const std::vector<std::string>& lines,
                                   const std::string& suffix = "");

// Throws std::invalid_argument unless the table, source and target are [A-Za-z0-9_]{1,max_chars},
// source and target differ, and neither is one of `reserved` (columns dibs keeps its lease in).
void check_plain_names(const std::string& table, const std::string& source, const std::string& target,
                       std::size_t max_chars, std::initializer_list<const char*> reserved = {});

template <class Key>
void check_plain_names(const table_names<Key>& n, std::size_t max_chars, std::initializer_list<const char*> reserved = {}) {
  check_plain_names(n.table, n.source, n.target, max_chars, reserved);
}

// Throws std::invalid_argument when a mapped column is one a completion writes otherwise, or
// one twice: the row's key (MySQL would rewrite the key the row is addressed by), the source,
// the target, a column of dibs's own (a dibs_ name), the same name twice (PostgreSQL refuses
// such an UPDATE every batch, its rows left leased). `key`: the key column, once known.
void check_mapped_columns(const std::vector<std::string>& mapped, const std::string& key, const std::string& source,
                        const std::string& target);

// The refusal of a mapped column the table lacks and no type was given for (`columns`: the
// table's, as the server spells them; `same`: how it compares names), naming the map part and
// the statement that adds it; "" when every mapped column is there or can be added.
std::string missing_mapped_refusal(const std::string& table, const std::vector<std::string>& mapped,
                                   const std::vector<std::string>& types, const std::vector<std::string>& columns,
                                   bool (*same)(const std::string&, const std::string&));

}  // namespace dibs::sql_common
