// What a user's own table lacks of the columns and the index dibs keeps its claims in, for either
// SQL dialect, and the one-line refusal that names it. Pure (tests/unit/test_sql_table_schema.cpp,
// test_pg_table_schema.cpp); each dialect's table_schema lists its columns and writes the
// statements that add them.
#pragma once

#include <dibs/stores/sql_table_names.hpp>

#include <string>
#include <vector>

namespace dibs::sql_common {

// What the server's catalog says the table has (names as the server spells them).
struct table_shape {
  std::vector<std::string> columns;
  std::vector<std::string> indexes;
};

struct schema_gap {
  bool source_missing = false;       // --source: the user's data, dibs can't add it
  std::vector<std::string> columns;  // dibs's columns (and --target) to add, in order
  bool index_missing = false;        // the claim index
  bool complete() const { return !source_missing && columns.empty() && !index_missing; }
};

// Whether two column or index names are the same to the server.
using same_name_fn = bool (*)(const std::string&, const std::string&);
bool exact_name(const std::string& a, const std::string& b);
bool caseless_name(const std::string& a, const std::string& b);  // MySQL's column and index names
bool has_name(const std::vector<std::string>& names, const std::string& name, same_name_fn same);

// What one dialect keeps its claims in (mysql_table_schema.cpp, pg_table_schema.cpp): dibs's
// columns with their definitions, in the order they are added (the key first: only a table with no
// key of its own gets dibs's `id`), the claim index's name, and how the server compares names.
struct table_needs {
  std::vector<column_definition> columns;
  std::string index;
  same_name_fn same = exact_name;
};

// What the table of `shape` lacks of `needs`; `source`: the user's column dibs reads.
schema_gap find_gap(const std::string& source, const table_needs& needs, const table_shape& shape);

// "ADD COLUMN <definition>" for each column `gap` lacks, in `needs`' order, joined by ", "; ""
// when it lacks none.
std::string add_column_clauses(const table_needs& needs, const schema_gap& gap);

// The refusal of a table that lacks dibs's columns (a missing source column is
// missing_table_error::source_column's), one line: the table, the missing columns and index,
// `statements` (each ending in ';') that add them, and `init_hint` (the dibs init command, with the store's redacted URI).
std::string gap_message(const std::string& table, const schema_gap& gap, const table_needs& needs,
                        const std::string& statements, const std::string& init_hint);

}  // namespace dibs::sql_common
