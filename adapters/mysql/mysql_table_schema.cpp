#include "mysql_table_schema.hpp"
#include "adapters/mysql/mysql_quote.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace dibs::mysql {

namespace {
constexpr const char* claim_index = "dibs_claim";

// Every column dibs needs, in the order ALTER TABLE must add them, with create_table's
// definitions (dibs_columns). The key is the user's own (row_key_pick.hpp); only a table that has
// none gets dibs's `id`, UNIQUE (its primary key, if it has one, stays).
std::vector<sql_common::column_definition> needed_columns(const table_names& n) {
  std::vector<sql_common::column_definition> out{{n.key.column, "`id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE KEY"}};
  for (auto& column : dibs_columns(n)) out.push_back(std::move(column));
  return out;
}

std::string quoted_text(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}
}  // namespace

schema_gap find_gap(const table_names& n, const table_shape& shape) {
  std::vector<std::string> needed;
  for (const auto& column : needed_columns(n)) needed.push_back(column.first);
  return sql_common::find_gap(n.source, needed, claim_index, shape, sql_common::caseless_name);
}

std::string alter_table(const table_names& n, const schema_gap& gap) {
  std::string clauses;
  for (const auto& [name, definition] : needed_columns(n))
    if (std::find(gap.columns.begin(), gap.columns.end(), name) != gap.columns.end())
      clauses += (clauses.empty() ? "" : ", ") + std::string("ADD COLUMN ") + definition;
  if (gap.index_missing)
    clauses += (clauses.empty() ? "" : ", ") + std::string("ADD KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `lock_until`)");
  return clauses.empty() ? "" : "ALTER TABLE " + q(n.table) + " " + clauses;
}

std::string gap_message(const table_names& n, const schema_gap& gap, const std::string& init_hint) {
  return sql_common::gap_message(n.table, gap, claim_index, alter_table(n, gap) + ";", init_hint);
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
