#include "mysql_settings.hpp"

#include <dibs/stores/mysql_store.hpp>
#include "server_errors.hpp"

#include <adapters/sql/table_settings.hpp>

#include <algorithm>

namespace dibs::mysql {

namespace settings_sql {
std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_settings (table_name VARCHAR(64) NOT NULL, name VARCHAR(32) NOT NULL, "
         "value TEXT NOT NULL, recorded_at DATETIME(6) NOT NULL DEFAULT NOW(6), PRIMARY KEY (table_name, name))";
}
std::string read(const std::string& table_quoted) {
  return "SELECT name, value FROM dibs_settings WHERE table_name = " + table_quoted + " ORDER BY name";
}
std::string write(const std::string& table_quoted, const std::string& name_quoted, const std::string& value_quoted) {
  return "INSERT INTO dibs_settings (table_name, name, value) VALUES (" + table_quoted + ", " + name_quoted + ", " +
         value_quoted + ") ON DUPLICATE KEY UPDATE value = VALUES(value), recorded_at = NOW(6)";
}
}  // namespace settings_sql

settings_record read_settings_record(mysql_session& c, const std::string& table) {
  settings_record r;
  try {
    for (const auto& row : c.select(settings_sql::read(c.quote(table))))
      if (row.size() == 2 && row[0] && row[1]) r.emplace_back(*row[0], *row[1]);
  } catch (const sql_error& e) {
    // ER_NO_SUCH_TABLE: no dibs init has recorded anything here. A user with rights on their
    // table only may not read dibs_settings: no record for them either (flags as given).
    if (e.code != 1146 && classify(e.code) != error_class::denied) throw;
  }
  return r;
}

settings_record apply_settings_record(mysql_session& c, table_names& names, mysql_options& opts) {
  const auto recorded = opts.settings.read ? read_settings_record(c, names.table) : settings_record{};
  return sql_common::apply_table_settings(recorded, names, opts, "mysql", [](const table_names&) {});
}

void write_settings_record(mysql_store& st, const std::string& table, const settings_record& r) {
  st.in_session([&](mysql_session& c) {
    c.execute(settings_sql::create_table());
    // A record made by an earlier dibs keeps a value in VARCHAR(255): a longer map widens it.
    const bool long_value = std::any_of(r.begin(), r.end(), [](const auto& nv) { return nv.second.size() > 255; });
    if (long_value) c.execute("ALTER TABLE dibs_settings MODIFY value TEXT NOT NULL");
    for (const auto& [name, value] : r) c.execute(settings_sql::write(c.quote(table), c.quote(name), c.quote(value)));
    // The record is what is in effect now: a setting it no longer holds (a mapping given away
    // with map '') goes.
    std::string kept;
    for (const auto& nv : r) kept += (kept.empty() ? "" : ", ") + c.quote(nv.first);
    c.execute("DELETE FROM dibs_settings WHERE table_name = " + c.quote(table) +
              (kept.empty() ? std::string() : " AND name NOT IN (" + kept + ")"));
  });
}

}  // namespace dibs::mysql
