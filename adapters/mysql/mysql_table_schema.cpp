#include "mysql_table_schema.hpp"
#include "adapters/mysql/mysql_quote.hpp"

#include <cctype>
#include <utility>

namespace dibs::mysql {

namespace {

std::string quoted_text(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}
}  // namespace

// Every column dibs needs, in the order ALTER TABLE must add them, with create_table's
// definitions (dibs_columns). The key is the user's own (row_key_pick.hpp); only a table that has
// none gets dibs's `id`, UNIQUE (its primary key, if it has one, stays).
sql_common::table_needs table_needs_of(const table_names& n) {
  sql_common::table_needs needs{{{n.key.column, "`id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE KEY"}},
                                "dibs_claim",
                                sql_common::caseless_name};
  for (auto& column : dibs_columns(n)) needs.columns.push_back(std::move(column));
  return needs;
}

std::string alter_table(const table_names& n, const sql_common::schema_gap& gap) {
  auto clauses = sql_common::add_column_clauses(table_needs_of(n), gap);
  if (gap.index_missing)
    clauses += (clauses.empty() ? "" : ", ") + std::string("ADD KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `lock_until`)");
  return clauses.empty() ? "" : "ALTER TABLE " + q(n.table) + " " + clauses;
}

std::string columns_query(const std::string& table) {
  return "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
         "DATABASE() AND TABLE_NAME = " + quoted_text(table) + " ORDER BY ORDINAL_POSITION";
}

std::string unique_keys_query(const std::string& table) {
  return "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND "
         "TABLE_NAME = " + quoted_text(table) + " AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX";
}

std::string make_id_unique(const table_names& n) { return "ALTER TABLE " + q(n.table) + " ADD UNIQUE KEY (`id`)"; }

std::string indexes_query(const std::string& table) {
  return "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND "
         "TABLE_NAME = " + quoted_text(table);
}

std::string tables_query() {
  return "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME";
}

}  // namespace dibs::mysql
