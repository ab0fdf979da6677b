// The user's own table (PostgreSQL): which of the columns and the index dibs needs it lacks, and
// the statements that add them. Pure (tests/unit/test_pg_table_schema.cpp); the store reads the
// table's columns and indexes from the catalog and hands them here.
#pragma once

#include <adapters/postgres/pg_protocol.hpp>
#include <adapters/sql/table_gap.hpp>

#include <string>
#include <vector>

namespace dibs::pg {

// The catalog's columns and indexes; what the table lacks (sql/table_gap.hpp), the claim index
// being <table>_dibs_open. Names are compared exactly: dibs quotes every name.
using sql_common::schema_gap;
using sql_common::table_shape;

schema_gap find_gap(const table_names& n, const table_shape& shape);

// The ALTER TABLE adding the missing columns and the CREATE INDEX, each ending in ';' and joined
// by a space; "" when nothing is missing (the source is not dibs's to add).
std::string alter_table(const table_names& n, const schema_gap& gap);

// The refusal (sql_common::gap_message) with the statements above.
std::string gap_message(const table_names& n, const schema_gap& gap,
                        const std::string& init_hint);

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
