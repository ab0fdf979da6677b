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

// One ALTER TABLE making the table what dibs needs (the source is not dibs's to add), no ';'; ""
// when nothing: the earlier dibs's columns renamed, the missing ones added, and dibs_open (with
// its index) made again when it reads another target, or a renamed column (MySQL 8 refuses to
// rename a column a generated column reads; MariaDB would follow the rename itself).
std::string alter_table(const table_names& n, const sql_common::schema_gap& gap);
// Every statement dibs init runs for `gap`, in order: the ALTER TABLE, then, when an earlier dibs
// kept its failure reasons in the table's own `error` column, their copy into dibs_error.
std::vector<std::string> table_statements(const table_names& n, const sql_common::schema_gap& gap);
// The same, each ending in ';', for a refusal to show.
std::string shown_statements(const table_names& n, const sql_common::schema_gap& gap);
// How a refusal of a table with a column of its own under one of dibs's names suggests renaming it.
std::string rename_example(const table_names& n, const std::string& column);

// The type of a column as table_shape::kinds sums it up, from information_schema.COLUMNS's
// DATA_TYPE and IS_NULLABLE ("int,NO"), and the names a generated column's expression reads.
std::string column_kind(const std::string& data_type, const std::string& is_nullable);
std::vector<std::string> names_read(const std::string& generation_expression);

// Queries for the shape of `table` in the connection's database, and the tables there. Columns:
// name, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE (mysql_row_key.hpp reads them), GENERATION_EXPRESSION; unique keys: index name and
// column, in key order.
std::string columns_query(const std::string& table);
std::string indexes_query(const std::string& table);
std::string unique_keys_query(const std::string& table);
std::string tables_query();

// What a refusal of a table dibs can't address suggests (row_key_pick.hpp).
std::string make_id_unique(const table_names& n);

}  // namespace dibs::mysql
