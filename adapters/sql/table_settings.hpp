// What dibs init's record (dibs/recorded_settings.hpp) means for a SQL table, the same on
// MySQL/MariaDB and PostgreSQL: where no flag was given, the record's source, target, map and
// on_done are the run's; a flag that contradicts it is refused (setting_conflict). Each store only
// reads and writes the record in its own dialect (mysql_settings.cpp, pg_settings.cpp).
#pragma once

#include <adapters/sql/own_columns.hpp>

#include <dibs/field_mapping.hpp>
#include <dibs/log.hpp>
#include <dibs/recorded_settings.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <string>

namespace dibs::sql_common {

// `names` and `opts` as the record `recorded` (read only when opts.settings.read) and the flags
// say; fills opts.settings.result (with dibs init, the layout it prepares the table in:
// own_columns.hpp). `check` vets the names once the record's are in (PostgreSQL's plain names).
// `server` names the store in the debug log. Returns the record.
template <class Key, class Check>
settings_record apply_table_settings(const settings_record& recorded, table_names<Key>& names, sql_table_options& opts,
                                     const char* server, Check check) {
  auto& use = opts.settings;
  const std::string where = "table " + names.table;
  const auto mapping = resolve_mapping(opts.map, names.mapped, use, recorded, where);
  names.mapped = mapping.names;
  names.mapped_types = mapping.types;
  if (!use.read) return {};
  names.source = opts.source = resolve_setting("source", names.source, use, recorded, where);
  names.target = opts.target = resolve_setting("target", names.target, use, recorded, where);
  check(names);
  const auto done = resolve_setting("on_done", opts.done == on_done::remove ? "delete" : "mark", use, recorded, where);
  opts.done = done == "delete" ? on_done::remove : on_done::mark;
  use.result->found = !recorded.empty();
  use.result->in_effect = {{"source", names.source}, {"target", names.target}};
  if (!mapping.recorded.empty()) use.result->in_effect.emplace_back("map", mapping.recorded);
  // on_done is recorded only when dibs init was given it: a table may be drained both ways.
  if (use.was_given("on_done") || recorded_value(recorded, "on_done")) use.result->in_effect.emplace_back("on_done", done);
  if (use.record) use.result->in_effect.emplace_back(layout_setting, prefixed_layout);
  if (!recorded.empty()) log::debug(server, ": the settings dibs init recorded for ", where, " are in effect");
  return recorded;
}

}  // namespace dibs::sql_common
