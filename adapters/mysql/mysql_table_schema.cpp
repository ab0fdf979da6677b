#include "mysql_table_schema.hpp"
#include "adapters/mysql/mysql_quote.hpp"

#include <adapters/sql/own_columns.hpp>

#include <algorithm>
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
  // As the earlier dibs created them (information_schema's DATA_TYPE, IS_NULLABLE: column_kind).
  sql_common::complete_needs(needs, dibs_columns(n), n.target,
                             {{"lock_by", "varchar,yes"}, {"lock_token", "bigint,yes"}, {"lock_until", "datetime,yes"},
                              {"attempts", "int,no"}, {"error", "text,yes"}, {"http_status", "int,yes"}, {"failed_at", "datetime,yes"}},
                             "the claim column dibs_open");
  // Mapped columns given a type: the user's, added when missing like the target.
  for (auto& column : sql_common::mapped_column_definitions(n, [](const std::string& c) { return q(c); }))
    needs.columns.push_back(std::move(column));
  return needs;
}

std::string alter_table(const table_names& n, const sql_common::schema_gap& gap) {
  const auto needs = table_needs_of(n);
  std::string clauses;
  const auto add = [&](const std::string& clause) { clauses += (clauses.empty() ? "" : ", ") + clause; };
  const bool rebuild = gap.claim_present && (gap.claim_stale || !gap.renames.empty());
  if (rebuild) {
    if (!gap.index_missing) add("DROP KEY `dibs_claim`");
    add("DROP COLUMN `dibs_open`");
  }
  for (const auto& [from, to] : gap.renames) add("RENAME COLUMN " + q(from) + " TO " + q(to));
  if (const auto added = sql_common::add_column_clauses(needs, gap); !added.empty()) add(added);
  if (rebuild)
    for (const auto& [name, definition] : needs.columns)
      if (name == "dibs_open") add("ADD COLUMN " + definition);
  if (gap.index_missing || rebuild) add("ADD KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `dibs_lock_until`)");
  return clauses.empty() ? "" : "ALTER TABLE " + q(n.table) + " " + clauses;
}

std::vector<std::string> table_statements(const table_names& n, const sql_common::schema_gap& gap) {
  std::vector<std::string> out;
  if (auto alter = alter_table(n, gap); !alter.empty()) out.push_back(std::move(alter));
  const bool reasons_in_users_column =
      std::any_of(gap.left_to_user.begin(), gap.left_to_user.end(), [](const std::string& c) { return sql_common::caseless_name(c, "error"); });
  if (reasons_in_users_column)
    out.push_back("UPDATE " + q(n.table) + " SET `dibs_error` = `error` WHERE `dibs_failed_at` IS NOT NULL AND `dibs_error` IS NULL");
  return out;
}

std::string shown_statements(const table_names& n, const sql_common::schema_gap& gap) {
  std::string out;
  for (const auto& s : table_statements(n, gap)) out += (out.empty() ? "" : " ") + s + ";";
  return out;
}

std::string rename_example(const table_names& n, const std::string& column) {
  return "ALTER TABLE " + q(n.table) + " RENAME COLUMN " + q(column) + " TO " + q("my_" + column);
}

std::string column_kind(const std::string& data_type, const std::string& is_nullable) {
  std::string kind = data_type + "," + is_nullable;
  for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return kind;
}

std::vector<std::string> names_read(const std::string& expression) {
  // The server writes every column of a generation expression in backticks (`geo`), doubling a
  // backtick inside one.
  std::vector<std::string> names;
  for (std::size_t at = expression.find('`'); at != std::string::npos; at = expression.find('`', at)) {
    std::string name;
    std::size_t i = at + 1;
    for (; i < expression.size(); ++i) {
      if (expression[i] != '`') {
        name += expression[i];
      } else if (i + 1 < expression.size() && expression[i + 1] == '`') {
        name += '`';
        ++i;
      } else {
        break;
      }
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    at = i + 1;
  }
  return names;
}

std::string columns_query(const std::string& table) {
  return "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
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
