#include "pg_table_schema.hpp"

#include <algorithm>
#include <utility>

namespace dibs::pg {

namespace {
std::string q(const std::string& ident) { return "\"" + ident + "\""; }

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every column dibs needs, with create_table's definitions (the id only UNIQUE: the user's table
// may have a primary key of its own; BIGSERIAL numbers the rows already there).
std::vector<std::pair<std::string, std::string>> needed_columns(const table_names& n) {
  return {
      {"id", "\"id\" BIGSERIAL UNIQUE"},
      {n.target, q(n.target) + " JSONB NULL"},
      {"lock_by", "\"lock_by\" VARCHAR(128) NULL"},
      {"lock_token", "\"lock_token\" BIGINT NULL"},
      {"lock_until", "\"lock_until\" TIMESTAMPTZ NULL"},
      {"attempts", "\"attempts\" INT NOT NULL DEFAULT 0"},
      {"error", "\"error\" TEXT NULL"},
      {"http_status", "\"http_status\" INT NULL"},
      {"failed_at", "\"failed_at\" TIMESTAMPTZ NULL"},
  };
}
}  // namespace

schema_gap find_gap(const table_names& n, const table_shape& shape) {
  schema_gap gap;
  gap.source_missing = !has(shape.columns, n.source);
  for (const auto& [name, definition] : needed_columns(n))
    if (!has(shape.columns, name)) gap.columns.push_back(name);
  gap.index_missing = !has(shape.indexes, n.table + "_dibs_open");
  return gap;
}

std::string alter_table(const table_names& n, const schema_gap& gap) {
  std::string clauses;
  for (const auto& [name, definition] : needed_columns(n))
    if (has(gap.columns, name)) clauses += (clauses.empty() ? "" : ", ") + std::string("ADD COLUMN ") + definition;
  std::string out = clauses.empty() ? "" : "ALTER TABLE " + q(n.table) + " " + clauses + ";";
  if (gap.index_missing) out += (out.empty() ? "" : " ") + create_index(n) + ";";
  return out;
}

std::string gap_message(const table_names& n, const schema_gap& gap,
                        const std::string& init_hint) {
  std::string missing;
  for (const auto& c : gap.columns) missing += (missing.empty() ? "" : ", ") + c;
  if (gap.index_missing) missing += (missing.empty() ? "" : ", ") + std::string("index ") + n.table + "_dibs_open";
  return "table " + n.table + " lacks what dibs keeps its claims in (" + missing + "); add it with: " +
         alter_table(n, gap) + " or run: " + init_hint;
}

std::string columns_query() {
  return "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND "
         "table_name = $1 ORDER BY ordinal_position";
}

std::string indexes_query() {
  return "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1";
}

std::string tables_query() {
  return "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1";
}

}  // namespace dibs::pg
