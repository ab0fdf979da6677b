// The user's own table: which of the columns and the index dibs needs it lacks, and the ALTER
// TABLE that adds them. Pure (tests/unit/test_sql_table_schema.cpp); the store reads the table's
// columns and indexes from information_schema and hands them here.
#pragma once

#include <adapters/mysql/mysql_protocol.hpp>
#include <adapters/sql/table_gap.hpp>

#include <string>
#include <vector>

namespace dibs::mysql {

// What dibs keeps its claims in on MySQL/MariaDB (sql/table_gap.hpp reads a table's shape against
// it): the claim index is dibs_claim; column names are case-insensitive, and so is the comparison.
sql_common::table_needs table_needs_of(const table_names& n);

// One ALTER TABLE adding what `gap` lacks (the source is not dibs's to add), no ';'; "" when nothing.
std::string alter_table(const table_names& n, const sql_common::schema_gap& gap);

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
