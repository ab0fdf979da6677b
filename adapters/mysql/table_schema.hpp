// The user's own table: which of the columns and the index dibs needs it lacks, and the ALTER
// TABLE that adds them. Pure (tests/unit/test_sql_table_schema.cpp); the store reads the table's
// columns and indexes from information_schema and hands them here.
#pragma once

#include <adapters/mysql/sql_protocol.hpp>

#include <string>
#include <vector>

namespace dibs::sql {

// What information_schema says the table has (names as the server spells them).
struct table_shape {
  std::vector<std::string> columns;
  std::vector<std::string> indexes;
};

struct schema_gap {
  bool source_missing = false;          // --source: the user's data, dibs can't add it
  std::vector<std::string> columns;     // dibs's columns (and --target) to add, in order
  bool index_missing = false;           // the claim index, dibs_claim
  bool complete() const { return !source_missing && columns.empty() && !index_missing; }
};

// MySQL column names are case-insensitive: so is the comparison.
schema_gap find_gap(const table_names& n, const table_shape& shape);

// One ALTER TABLE adding what `gap` lacks (the source is not dibs's to add); "" when nothing.
std::string alter_table(const table_names& n, const schema_gap& gap);

// The refusal of a table that lacks dibs's columns (a missing source column is
// missing_table_error::source_column's), one line: the table, the missing column names, the ALTER TABLE, and `init_hint`
// (init_hint.hpp: the command that prepares the table).
std::string gap_message(const table_names& n, const schema_gap& gap,
                        const std::string& init_hint);

// Queries for the shape of `table` in the connection's database, and the tables there. Columns:
// name, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE (row_key.hpp reads them); unique keys: index name and
// column, in key order.
std::string columns_query(const std::string& table);
std::string indexes_query(const std::string& table);
std::string unique_keys_query(const std::string& table);
std::string tables_query();

// What a refusal of a table dibs can't address suggests (row_key_pick.hpp).
std::string make_id_unique(const table_names& n);

}  // namespace dibs::sql
