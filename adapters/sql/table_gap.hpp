// What a user's own table lacks of the columns and the index dibs keeps its claims in, for either
// SQL dialect, and the one-line refusal that names it. Pure (tests/unit/test_sql_table_schema.cpp,
// test_pg_table_schema.cpp); each dialect's table_schema lists its columns and writes the
// statements that add them.
#pragma once

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

// `needed`: dibs's columns in the order they are added; `index`: the claim index's name.
schema_gap find_gap(const std::string& source, const std::vector<std::string>& needed, const std::string& index,
                    const table_shape& shape, same_name_fn same);

// The refusal of a table that lacks dibs's columns (a missing source column is
// missing_table_error::source_column's), one line: the table, the missing columns and index,
// `statements` (each ending in ';') that add them, and `init_hint` (the dibs init command, with the store's redacted URI).
std::string gap_message(const std::string& table, const schema_gap& gap, const std::string& index,
                        const std::string& statements, const std::string& init_hint);

}  // namespace dibs::sql_common
