#include "mysql_protocol.hpp"
#include "adapters/mysql/mysql_quote.hpp"
#include "adapters/sql/row_fields.hpp"

#include <dibs/setting_error.hpp>

#include <stdexcept>

namespace dibs::mysql {

namespace {
std::string key_list(const std::vector<std::string>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) out += (i ? "," : "") + keys[i];
  return out;
}

std::string key_col(const table_names& n) { return q(n.key.column); }

// The open rows: a stored generated column, 1 when the row is neither done nor failed and NULL
// otherwise, so the index below holds only what a claim can want (MySQL has no partial indexes).
constexpr const char* open_col = "`dibs_open`";
}  // namespace

// The columns dibs owns: source and target must name others.
void check_names(const table_names& n) {
  sql_common::check_plain_names(n, 64, {"dibs_lock_by", "dibs_lock_token", "dibs_lock_until", "dibs_attempts", "dibs_error",
                                        "dibs_http_status", "dibs_failed_at", "dibs_pick", "dibs_open"});
}

std::vector<sql_common::column_definition> dibs_columns(const table_names& n) {
  return {
      {n.target, q(n.target) + " JSON NULL"},
      {"dibs_lock_by", "`dibs_lock_by` VARCHAR(128) NULL"},
      {"dibs_lock_token", "`dibs_lock_token` BIGINT UNSIGNED NULL"},
      {"dibs_lock_until", "`dibs_lock_until` DATETIME(6) NULL"},
      {"dibs_attempts", "`dibs_attempts` INT NOT NULL DEFAULT 0"},
      {"dibs_error", "`dibs_error` TEXT NULL"},
      {"dibs_http_status", "`dibs_http_status` INT NULL"},
      {"dibs_failed_at", "`dibs_failed_at` DATETIME(6) NULL"},
      {"dibs_pick", "`dibs_pick` TINYINT UNSIGNED NOT NULL DEFAULT (FLOOR(RAND() * 256))"},
      {"dibs_open", std::string(open_col) + " TINYINT AS (IF(" + q(n.target) + " IS NULL AND `dibs_failed_at` IS NULL, 1, NULL)) STORED"},
  };
}

std::string create_table(const table_names& n) {
  std::vector<std::string> lines{"`id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY", q(n.source) + " VARCHAR(255) NULL"};
  for (const auto& column : sql_common::mapped_column_definitions(n, [](const std::string& c) { return q(c); }))
    lines.push_back(column.second);
  for (const auto& column : dibs_columns(n)) lines.push_back(column.second);
  lines.push_back("KEY `dibs_claim` (" + std::string(open_col) + ", `dibs_pick`, `dibs_lock_until`)");
  return sql_common::create_table_statement(q(n.table), lines, " ENGINE=InnoDB");
}

std::string claimable_condition(const table_names&, std::int64_t grace_us) {
  // A lease given back for a retry (token 0, release_rows) is due at its time, with no grace.
  // Written as two terms so that the first, on the claim index's columns alone, skips every live
  // lease inside the index (index condition pushdown): only a lease within the grace of its
  // expiry costs a row read for its token.
  return std::string(open_col) + " = 1 AND (`dibs_lock_until` IS NULL OR `dibs_lock_until` < NOW(6)) AND (`dibs_lock_until` IS NULL OR " +
         "`dibs_lock_until` < NOW(6) - INTERVAL " + std::to_string(grace_us) + " MICROSECOND OR `dibs_lock_token` = 0)";
}

std::string more_cells(const table_names& n) {
  const auto columns = n.typed_columns();
  const auto types = n.typed_column_types();
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    // The common types as the server writes them; the others wrapped in {"v": value} by the
    // server, which knows a JSON column (MariaDB's LONGTEXT) from a text: a date and time as ISO
    // 8601 (the server writes a space where ISO has a T).
    if (sql_common::cell_kind_of(types[i]) != sql_common::cell_kind::wrapped) {
      out += ", " + q(columns[i]);
      continue;
    }
    const bool datetime = types[i] == "datetime" || types[i] == "timestamp";
    const auto value = datetime ? "REPLACE(CAST(" + q(columns[i]) + " AS CHAR), ' ', 'T')" : q(columns[i]);
    out += ", JSON_OBJECT('v', " + value + ")";
  }
  return out;
}

std::string claim_rows(const table_names& n, std::int64_t grace_us, int from, bool at_or_above, std::size_t limit,
                       std::int64_t lease_us) {
  // The primary key closes the index's own order (InnoDB appends it to every secondary index);
  // any other key would make the server sort, locking every candidate first.
  const std::string order = n.key.primary ? ", " + key_col(n) : std::string();
  return "SELECT " + key_text(n.key, key_col(n)) + ", " + q(n.source) + ", `dibs_attempts` + 1, NOW(6) + INTERVAL " + std::to_string(lease_us) +
         " MICROSECOND" + more_cells(n) + " FROM " + q(n.table) + " FORCE INDEX (`dibs_claim`) WHERE " + claimable_condition(n, grace_us) +
         " AND `dibs_pick` " + (at_or_above ? ">= " : "< ") + std::to_string(from) +
         " ORDER BY `dibs_pick`, `dibs_lock_until`" + order + " LIMIT " + std::to_string(limit) + " FOR UPDATE SKIP LOCKED";
}

std::string set_lease(const table_names& n, const std::vector<std::string>& keys, const std::string& by_quoted,
                      std::uint64_t token, std::int64_t lease_us) {
  return "UPDATE " + q(n.table) + " SET `dibs_lock_by` = " + by_quoted + ", `dibs_lock_token` = " + std::to_string(token) +
         ", `dibs_lock_until` = NOW(6) + INTERVAL " + std::to_string(lease_us) +
         " MICROSECOND, `dibs_attempts` = `dibs_attempts` + 1 WHERE " + key_col(n) + " IN (" + key_list(keys) + ")";
}

namespace {
// The rows of `refs` whose lease `by` still holds: the same key and token, and (live) not
// expired. Each row's token is its key's CASE, not a row-constructor IN ((key, token), ...):
// MariaDB 10.11's multi-row IN matches no key with a character the column's charset spells
// otherwise than the session's (a latin1 column's 'Zürich-1'), where `=`, IN and CASE do.
std::string held_condition(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted,
                           bool live) {
  std::vector<std::string> keys;
  std::string tokens;
  for (const auto& r : refs) {
    keys.push_back(r.key);
    tokens += " WHEN " + r.key + " THEN " + std::to_string(r.token);
  }
  return key_col(n) + " IN (" + key_list(keys) + ") AND `dibs_lock_token` = CASE " + key_col(n) + tokens + " END AND `dibs_lock_by` = " +
         by_quoted + (live ? " AND `dibs_lock_until` >= NOW(6)" : "");
}
}  // namespace

std::string held_rows(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted, bool live) {
  return "SELECT " + key_text(n.key, key_col(n)) + " FROM " + q(n.table) + " WHERE " + held_condition(n, refs, by_quoted, live) +
         " ORDER BY " + key_col(n) + " FOR UPDATE";
}

std::string delete_held_rows(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted) {
  return "DELETE FROM " + q(n.table) + " WHERE " + held_condition(n, refs, by_quoted, true) + " RETURNING " +
         key_text(n.key, key_col(n));
}

namespace {
std::string complete_set(const table_names& n, const std::vector<std::string>& keys,
                         const std::vector<std::string>& results_quoted) {
  std::string cases;
  for (std::size_t i = 0; i < keys.size(); ++i) cases += " WHEN " + keys[i] + " THEN " + results_quoted[i];
  // Each mapped column from the target just set (MySQL and MariaDB assign left to right): its
  // member's text, JSON null as NULL; the server converts it to the column's type or refuses the row.
  std::string mapped;
  for (const auto& col : n.mapped) {
    const auto member = "JSON_EXTRACT(" + q(n.target) + ", '$.\"" + col + "\"')";
    mapped += ", " + q(col) + " = CASE JSON_TYPE(" + member + ") WHEN 'NULL' THEN NULL ELSE JSON_UNQUOTE(" + member + ") END";
  }
  return "UPDATE " + q(n.table) + " SET " + q(n.target) + " = CASE " + key_col(n) + cases + " END" + mapped +
         ", `dibs_lock_by` = NULL, `dibs_lock_token` = NULL, `dibs_lock_until` = NULL, `dibs_error` = NULL";
}
}  // namespace

std::string complete_rows(const table_names& n, const std::vector<std::string>& keys,
                          const std::vector<std::string>& results_quoted) {
  return complete_set(n, keys, results_quoted) + " WHERE " + key_col(n) + " IN (" + key_list(keys) + ")";
}

std::string complete_held_rows(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted,
                               const std::vector<std::string>& results_quoted) {
  std::vector<std::string> keys;
  for (const auto& r : refs) keys.push_back(r.key);
  return complete_set(n, keys, results_quoted) + " WHERE " + held_condition(n, refs, by_quoted, true);
}

std::string delete_rows(const table_names& n, const std::vector<std::string>& keys) {
  return "DELETE FROM " + q(n.table) + " WHERE " + key_col(n) + " IN (" + key_list(keys) + ")";
}

std::string renew_rows(const table_names& n, const std::vector<std::string>& keys, std::int64_t lease_us) {
  return "UPDATE " + q(n.table) + " SET `dibs_lock_until` = NOW(6) + INTERVAL " + std::to_string(lease_us) +
         " MICROSECOND WHERE " + key_col(n) + " IN (" + key_list(keys) + ")";
}

std::string release_rows(const table_names& n, const std::vector<std::string>& keys, std::int64_t delay_us,
                         const std::string& why_quoted, bool not_attempted) {
  const std::string lease = delay_us <= 0
                                ? "`dibs_lock_by` = NULL, `dibs_lock_token` = NULL, `dibs_lock_until` = NULL"
                                : "`dibs_lock_token` = 0, `dibs_lock_until` = NOW(6) + INTERVAL " + std::to_string(delay_us) + " MICROSECOND";
  const std::string attempts = not_attempted ? ", `dibs_attempts` = GREATEST(`dibs_attempts` - 1, 0)" : "";
  return "UPDATE " + q(n.table) + " SET " + lease + attempts + ", `dibs_error` = " + why_quoted + " WHERE " + key_col(n) +
         " IN (" + key_list(keys) + ")";
}

std::string fail_row(const table_names& n, const std::string& key, const std::string& reason_quoted, int http_status) {
  // The row counts its own attempts (claims increment them).
  return "UPDATE " + q(n.table) + " SET `dibs_failed_at` = NOW(6), `dibs_error` = " + reason_quoted + ", `dibs_http_status` = " +
         std::to_string(http_status) + ", `dibs_lock_by` = NULL, `dibs_lock_token` = NULL, `dibs_lock_until` = NULL WHERE " + key_col(n) +
         " = " + key;
}

std::string stats(const table_names& n) {
  const std::string open = std::string(open_col) + " = 1";
  return "SELECT COALESCE(SUM(" + q(n.target) + " IS NOT NULL), 0), "
         "COALESCE(SUM(" + q(n.target) + " IS NULL AND `dibs_failed_at` IS NOT NULL), 0), "
         "COALESCE(SUM(" + open + " AND `dibs_lock_token` IS NULL), 0), "
         "COALESCE(SUM(" + open + " AND `dibs_lock_token` IS NOT NULL AND `dibs_lock_until` >= NOW(6)), 0), "
         "COALESCE(SUM(" + open + " AND `dibs_lock_token` IS NOT NULL AND `dibs_lock_until` < NOW(6)), 0) FROM " + q(n.table);
}

std::string table_columns(const table_names& n) {
  // check_names keeps the name to [A-Za-z0-9_], so it can stand quoted as a value.
  return "SELECT `COLUMN_NAME` FROM information_schema.`COLUMNS` WHERE `TABLE_SCHEMA` = DATABASE() AND `TABLE_NAME` = '" +
         n.table + "' ORDER BY `ORDINAL_POSITION`";
}

std::string sample_open_row(const table_names& n, bool with_source, bool non_null_source, std::size_t limit) {
  return "SELECT " + key_text(n.key, key_col(n)) + (with_source ? ", " + q(n.source) + more_cells(n) : std::string()) + " FROM " +
         q(n.table) + " WHERE " + open_col + " = 1" + (with_source && non_null_source ? " AND " + q(n.source) + " IS NOT NULL" : std::string()) +
         " LIMIT " + std::to_string(limit);
}

std::string sample_done_row(const table_names& n) {
  return "SELECT " + key_text(n.key, key_col(n)) + ", " + q(n.source) + " FROM " + q(n.table) + " WHERE " + q(n.target) +
         " IS NOT NULL AND " + q(n.source) + " IS NOT NULL LIMIT 1";
}

std::string insert_sources(const table_names& n, const std::vector<std::string>& sources_quoted) {
  std::string values;
  for (std::size_t i = 0; i < sources_quoted.size(); ++i) values += (i ? ",(" : "(") + sources_quoted[i] + ")";
  return "INSERT INTO " + q(n.table) + " (" + q(n.source) + ") VALUES " + values;
}

bool read_committed_allowed(bool log_bin, std::string_view binlog_format) {
  return !(log_bin && binlog_format == "STATEMENT");
}

}  // namespace dibs::mysql
