#include "pg_table_schema.hpp"
#include "adapters/postgres/pg_quote.hpp"

#include <utility>

namespace dibs::pg {

// Every column dibs needs, with create_table's definitions (dibs_columns). The key is the user's
// own (row_key_pick.hpp); only a table that has none gets dibs's `id`, UNIQUE (its primary key, if
// it has one, stays), BIGSERIAL numbering the rows already there. Names are compared exactly: dibs
// quotes every name.
sql_common::table_needs table_needs_of(const table_names& n) {
  sql_common::table_needs needs{{{n.key.column, "\"id\" BIGSERIAL UNIQUE"}}, n.table + "_dibs_open", sql_common::exact_name};
  for (auto& column : dibs_columns(n)) needs.columns.push_back(std::move(column));
  return needs;
}

std::string alter_table(const table_names& n, const sql_common::schema_gap& gap) {
  const auto clauses = sql_common::add_column_clauses(table_needs_of(n), gap);
  std::string out = clauses.empty() ? "" : "ALTER TABLE " + q(n.table) + " " + clauses + ";";
  if (gap.index_missing) out += (out.empty() ? "" : " ") + create_index(n) + ";";
  return out;
}

namespace {
// $1 the table, in the current schema (as every statement of dibs names it: unqualified).
const char* const the_table =
    "(SELECT c.oid FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = current_schema() "
    "AND c.relname = $1)";
}  // namespace

std::string columns_query() {
  return std::string("SELECT a.attname::text, format_type(a.atttypid, NULL), ty.typname::text, "
                     "format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a JOIN pg_type ty ON ty.oid = "
                     "a.atttypid WHERE a.attrelid = ") + the_table + " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
}

std::string unique_keys_query() {
  // Unique indexes over plain columns (no expression, no WHERE), their key columns in order.
  return std::string("SELECT i.indexrelid::text, i.indisprimary, a.attname::text FROM pg_index i CROSS JOIN LATERAL "
                     "unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n) JOIN pg_attribute a ON a.attrelid = "
                     "i.indrelid AND a.attnum = k.attnum WHERE i.indrelid = ") + the_table +
         " AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL AND k.n <= i.indnkeyatts ORDER BY 1, k.n";
}

std::string make_id_unique(const table_names& n) { return "ALTER TABLE " + q(n.table) + " ADD UNIQUE (\"id\")"; }

std::string indexes_query() {
  return "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1";
}

std::string tables_query() {
  return "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1";
}

}  // namespace dibs::pg
