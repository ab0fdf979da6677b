// dibs init's record for one table on PostgreSQL (dibs/recorded_settings.hpp): rows (table_name,
// name, value) of `dibs_settings`, dibs's own table in the store's database, created by the first
// dibs init. Applied before the table is checked (pg_store's constructor); written by dibs init
// once the table is ready (open_store). Names are plain ([A-Za-z0-9_], check_names) and values
// are names or mark/delete: quoted as literals here.
#include "pg_store.hpp"
#include "adapters/sql/quoted.hpp"
#include <adapters/sql/table_settings.hpp>


#include <sstream>

namespace dibs::pg {

namespace {
std::string literal(const std::string& v) { return sql_common::quoted(v, '\''); }
}  // namespace

settings_record pg_store::read_settings_record() {
  settings_record r;
  // No dibs_settings yet, or a role with rights on its table only: no record (flags as given).
  if (query_value("SELECT CASE WHEN to_regclass('dibs_settings') IS NULL THEN false "
                  "ELSE has_table_privilege('dibs_settings', 'SELECT') END") != std::optional<std::string>("t"))
    return r;
  // One cell (query_value's): name=value lines.
  const auto all = query_value("SELECT string_agg(name || '=' || value, E'\\n' ORDER BY name) FROM dibs_settings WHERE table_name = " +
                               literal(names_.table));
  std::istringstream lines(all.value_or(""));
  for (std::string line; std::getline(lines, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) r.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  return r;
}

settings_record pg_store::apply_settings_record() {
  const auto recorded = opts_.settings.read ? read_settings_record() : settings_record{};
  return sql_common::apply_table_settings(recorded, names_, opts_, "postgres", [](const table_names& n) { check_names(n); });
}

void pg_store::write_settings_record(const settings_record& r) {
  std::string script = "BEGIN; CREATE TABLE IF NOT EXISTS dibs_settings (table_name text NOT NULL, name text NOT NULL, "
                       "value text NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (table_name, name));";
  for (const auto& [name, value] : r)
    script += " INSERT INTO dibs_settings (table_name, name, value) VALUES (" + literal(names_.table) + ", " + literal(name) +
              ", " + literal(value) + ") ON CONFLICT (table_name, name) DO UPDATE SET value = EXCLUDED.value, recorded_at = now();";
  // The record is what is in effect now: a setting it no longer holds (a mapping given away with
  // map '') goes.
  std::string kept;
  for (const auto& nv : r) kept += (kept.empty() ? "" : ", ") + literal(nv.first);
  script += " DELETE FROM dibs_settings WHERE table_name = " + literal(names_.table) +
            (kept.empty() ? std::string() : " AND name NOT IN (" + kept + ")") + ";";
  execute(script + " COMMIT");
}

}  // namespace dibs::pg
