// dibs init's record for one table on MySQL/MariaDB (dibs/recorded_settings.hpp): rows
// (table_name, name, value) of `dibs_settings`, dibs's own table in the store's database, created
// by the first dibs init. Read when the store opens, before its table checks; written by dibs init
// once the table is ready (open_store). The statements are plain functions of quoted values.
#pragma once

#include <adapters/mysql/mysql_protocol.hpp>
#include <adapters/mysql/mysql_session.hpp>

#include <dibs/recorded_settings.hpp>

#include <string>

namespace dibs::mysql {

class mysql_store;
struct mysql_options;

namespace settings_sql {
std::string create_table();
std::string read(const std::string& table_quoted);
std::string write(const std::string& table_quoted, const std::string& name_quoted, const std::string& value_quoted);
}  // namespace settings_sql

// The record for `table` (empty when none, or no dibs_settings yet).
settings_record read_settings_record(mysql_session& c, const std::string& table);
// names (source, target) and opts.done from the record where no flag was given (opts.settings);
// throws setting_conflict for a flag that contradicts it. Fills opts.settings.result (with dibs
// init, the layout it prepares the table in: own_columns.hpp). Returns the record read.
settings_record apply_settings_record(mysql_session& c, table_names& names, mysql_options& opts);
// Records `r` for `table` (dibs init), creating dibs_settings when missing.
void write_settings_record(mysql_store& st, const std::string& table, const settings_record& r);

}  // namespace dibs::mysql
