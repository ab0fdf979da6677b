// The user's own table: which of the columns and the index dibs needs it lacks, and the ALTER
// TABLE that adds them. Pure (tests/unit/test_sql_table_schema.cpp); the store reads the table's
// columns and indexes from information_schema and hands them here.
#pragma once

#include <adapters/mysql/mysql_protocol.hpp>
#include <adapters/sql/table_gap.hpp>

#include <string>
#include <vector>

namespace dibs::mysql {

// information_schema's columns and indexes; what the table lacks (sql/table_gap.hpp), the claim
// index being dibs_claim.
using sql_common::schema_gap;
using sql_common::table_shape;

// MySQL column names are case-insensitive: so is the comparison.
schema_gap find_gap(const table_names& n, const table_shape& shape);

// One ALTER TABLE adding what `gap` lacks (the source is not dibs's to add); "" when nothing.
std::string alter_table(const table_names& n, const schema_gap& gap);

// The refusal (sql_common::gap_message) with the ALTER TABLE.
std::string gap_message(const table_names& n, const schema_gap& gap,
                        const std::string& init_hint);

// Queries for the shape of `table` in the connection's database, and the tables there. Columns:
// name, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE (mysql_row_key.hpp reads them); unique keys: index name and
// column, in key order.
std::string columns_query(const std::string& table);
std::string indexes_query(const std::string& table);
std::string unique_keys_query(const std::string& table);
std::string tables_query();

// What a refusal of a table dibs can't address suggests (row_key_pick.hpp).
std::string make_id_unique(const table_names& n);

}  // namespace dibs::mysql
