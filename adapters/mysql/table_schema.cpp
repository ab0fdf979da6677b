#include "table_schema.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace dibs::sql {

namespace {
std::string q(const std::string& ident) { return "`" + ident + "`"; }

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& x) { return same_name(x, name); });
}

// Every column dibs needs, in the order ALTER TABLE must add them (dibs_open reads the target
// and failed_at), with its definition: the same as create_table's. The key is the user's own
// (row_key_pick.hpp); only a table that has none gets dibs's `id`, UNIQUE (its primary key, if it
// has one, stays).
std::vector<std::pair<std::string, std::string>> needed_columns(const table_names& n) {
  return {
      {n.key.column, "`id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE KEY"},
      {n.target, q(n.target) + " JSON NULL"},
      {"lock_by", "`lock_by` VARCHAR(128) NULL"},
      {"lock_token", "`lock_token` BIGINT UNSIGNED NULL"},
      {"lock_until", "`lock_until` DATETIME(6) NULL"},
      {"attempts", "`attempts` INT NOT NULL DEFAULT 0"},
      {"error", "`error` TEXT NULL"},
      {"http_status", "`http_status` INT NULL"},
      {"failed_at", "`failed_at` DATETIME(6) NULL"},
      {"dibs_pick", "`dibs_pick` TINYINT UNSIGNED NOT NULL DEFAULT (FLOOR(RAND() * 256))"},
      {"dibs_open", "`dibs_open` TINYINT AS (IF(" + q(n.target) + " IS NULL AND `failed_at` IS NULL, 1, NULL)) STORED"},
  };
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
  schema_gap gap;
  gap.source_missing = !has(shape.columns, n.source);
  for (const auto& [name, definition] : needed_columns(n))
    if (!has(shape.columns, name)) gap.columns.push_back(name);
  gap.index_missing = !has(shape.indexes, "dibs_claim");
  return gap;
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

std::string gap_message(const table_names& n, const schema_gap& gap,
                        const std::string& init_hint) {
  std::string missing;
  for (const auto& c : gap.columns) missing += (missing.empty() ? "" : ", ") + c;
  if (gap.index_missing) missing += (missing.empty() ? "" : ", ") + std::string("index dibs_claim");
  return "table " + n.table + " lacks what dibs keeps its claims in (" + missing + "); add it with: " +
         alter_table(n, gap) + "; or run: " + init_hint;
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

}  // namespace dibs::sql
