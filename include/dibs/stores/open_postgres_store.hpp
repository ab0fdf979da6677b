// Opening a PostgreSQL store on what both SQL stores are told (sql_table_options): dibs::open_store
// reaches it in one line, without PostgreSQL's own headers.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/admin_store.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace dibs::pg {

// postgresql://... or postgres://...
bool is_postgres_uri(std::string_view uri);

// The store, opened on `o` (o.uri names the table); with o.settings.record (dibs init), the
// settings in effect recorded once the table is ready. Throws std::invalid_argument for a bad URI,
// dibs::pg::pg_error when the server can't be reached, dibs::missing_table_error when the table is
// missing (create_table false), std::invalid_argument when it lacks dibs's columns (add_columns
// false); no message holds the password.
std::shared_ptr<admin_store> open_postgres_store(const sql_common::sql_table_options& o);

}  // namespace dibs::pg
