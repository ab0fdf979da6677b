// The user's own table (PostgreSQL): which of the columns and the index dibs needs it lacks, and
// the statements that add them. Pure (tests/unit/test_pg_table_schema.cpp); the store reads the
// table's columns and indexes from the catalog and hands them here.
#pragma once

#include <adapters/postgres/pg_protocol.hpp>
#include <adapters/sql/table_gap.hpp>

#include <string>
#include <vector>

namespace dibs::pg {

// What dibs keeps its claims in on PostgreSQL (sql/table_gap.hpp reads a table's shape against
// it): the claim index is <table>_dibs_open; names are compared exactly (dibs quotes every name).
sql_common::table_needs table_needs_of(const table_names& n);

// The statements that make the table what dibs needs, each ending in ';' and joined by a space;
// "" when nothing is (the source is not dibs's to add): the earlier dibs's columns renamed, the
// missing ones added, the claim index made again when it reads another target, and, when an
// earlier dibs kept its failure reasons in the table's own `error` column, their copy.
std::string alter_table(const table_names& n, const sql_common::schema_gap& gap);
// How a refusal of a table with a column of its own under one of dibs's names suggests renaming it.
std::string rename_example(const table_names& n, const std::string& column);

// The type of a column as table_shape::kinds sums it up (pg_type's typname, pg_attribute's
// attnotnull as the server prints it: "int4,t"), and the column names an index's predicate
// reads, from pg_indexes.indexdef.
std::string column_kind(const std::string& typname, const std::string& not_null);
std::vector<std::string> predicate_names(const std::string& indexdef);

// $1 = the table name: its columns (name, type, typname, type with modifier, NOT NULL: what
// pg_row_key.hpp reads); its indexes (name, definition); its unique keys (index, primary, column, in key order);
// (no parameter) the tables of the current schema.
std::string columns_query();
std::string indexes_query();
std::string unique_keys_query();
std::string tables_query();

// What a refusal of a table dibs can't address suggests (row_key_pick.hpp).
std::string make_id_unique(const table_names& n);

}  // namespace dibs::pg
