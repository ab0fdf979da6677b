#include "pg_table_schema.hpp"
#include "adapters/postgres/pg_quote.hpp"

#include <adapters/sql/own_columns.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

namespace dibs::pg {

// Every column dibs needs, with create_table's definitions (dibs_columns). The key is the user's
// own (row_key_pick.hpp); only a table that has none gets dibs's `id`, UNIQUE (its primary key, if
// it has one, stays), BIGSERIAL numbering the rows already there. Names are compared exactly: dibs
// quotes every name.
sql_common::table_needs table_needs_of(const table_names& n) {
  sql_common::table_needs needs{{{n.key.column, "\"id\" BIGSERIAL UNIQUE"}}, n.table + "_dibs_open", sql_common::exact_name};
  // As the earlier dibs created them (pg_type's typname, pg_attribute's attnotnull: column_kind).
  sql_common::complete_needs(needs, dibs_columns(n), n.target,
                             {{"lock_by", "varchar,f"}, {"lock_token", "int8,f"}, {"lock_until", "timestamptz,f"}, {"attempts", "int4,t"},
                              {"error", "text,f"}, {"http_status", "int4,f"}, {"failed_at", "timestamptz,f"}},
                             "the claim index " + needs.index);
  // Mapped columns given a type: the user's, added when missing like the target.
  for (auto& column : sql_common::mapped_column_definitions(n, [](const std::string& c) { return q(c); }))
    needs.columns.push_back(std::move(column));
  return needs;
}

std::string alter_table(const table_names& n, const sql_common::schema_gap& gap) {
  // PostgreSQL renames one column a statement; an index follows a rename by itself.
  std::string out;
  const auto add = [&](const std::string& statement) { out += (out.empty() ? "" : " ") + statement + ";"; };
  for (const auto& [from, to] : gap.renames) add("ALTER TABLE " + q(n.table) + " RENAME COLUMN " + q(from) + " TO " + q(to));
  if (const auto clauses = sql_common::add_column_clauses(table_needs_of(n), gap); !clauses.empty())
    add("ALTER TABLE " + q(n.table) + " " + clauses);
  if (gap.claim_stale) add("DROP INDEX IF EXISTS " + q(n.table + "_dibs_open"));
  if (gap.index_missing || gap.claim_stale) add(create_index(n));
  // An earlier dibs wrote its failure reasons into the table's own `error`: they are copied.
  if (std::find(gap.left_to_user.begin(), gap.left_to_user.end(), "error") != gap.left_to_user.end())
    add("UPDATE " + q(n.table) + " SET \"dibs_error\" = \"error\"::text WHERE \"dibs_failed_at\" IS NOT NULL AND \"dibs_error\" IS NULL");
  return out;
}

std::string rename_example(const table_names& n, const std::string& column) {
  return "ALTER TABLE " + q(n.table) + " RENAME COLUMN " + q(column) + " TO " + q("my_" + column);
}

std::string column_kind(const std::string& typname, const std::string& not_null) { return typname + "," + not_null; }

std::vector<std::string> predicate_names(const std::string& indexdef) {
  // pg_get_indexdef writes keywords in capitals and a column name in double quotes unless it is
  // a plain lower-case name: `... WHERE ((geo IS NULL) AND ("failedAt" IS NULL))`.
  std::vector<std::string> names;
  const auto where = indexdef.find(" WHERE ");
  if (where == std::string::npos) return names;
  const auto keep = [&](std::string name) {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  };
  for (std::size_t i = where + 7; i < indexdef.size();) {
    const char c = indexdef[i];
    if (c == '"') {
      std::string name;
      for (++i; i < indexdef.size(); ++i) {
        if (indexdef[i] != '"') name += indexdef[i];
        else if (i + 1 < indexdef.size() && indexdef[i + 1] == '"') name += indexdef[++i];
        else break;
      }
      ++i;
      keep(std::move(name));
    } else if (std::islower(static_cast<unsigned char>(c)) || c == '_') {
      std::string name;
      while (i < indexdef.size() && (std::islower(static_cast<unsigned char>(indexdef[i])) ||
                                     std::isdigit(static_cast<unsigned char>(indexdef[i])) || indexdef[i] == '_' || indexdef[i] == '$'))
        name += indexdef[i++];
      keep(std::move(name));
    } else if (c == '\'') {  // a literal: skipped whole
      for (++i; i < indexdef.size() && indexdef[i] != '\''; ++i) {
      }
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c))) {  // a keyword, a number, a type (::text)
      while (i < indexdef.size() && (std::isalnum(static_cast<unsigned char>(indexdef[i])) || indexdef[i] == '_')) ++i;
    } else {
      ++i;
    }
  }
  return names;
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
  return "SELECT indexname::text, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1";
}

std::string tables_query() {
  return "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1";
}

}  // namespace dibs::pg
