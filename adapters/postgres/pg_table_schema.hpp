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

// The ALTER TABLE adding the missing columns and the CREATE INDEX, each ending in ';' and joined
// by a space; "" when nothing is missing (the source is not dibs's to add).
std::string alter_table(const table_names& n, const sql_common::schema_gap& gap);

// $1 = the table name: its columns (name, type, typname, type with modifier, NOT NULL: what
// pg_row_key.hpp reads); its indexes; its unique keys (index, primary, column, in key order);
// (no parameter) the tables of the current schema.
std::string columns_query();
std::string indexes_query();
std::string unique_keys_query();
std::string tables_query();

// What a refusal of a table dibs can't address suggests (row_key_pick.hpp).
std::string make_id_unique(const table_names& n);

}  // namespace dibs::pg
