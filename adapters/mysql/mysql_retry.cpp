#include "mysql_retry.hpp"
#include "adapters/mysql/mysql_quote.hpp"

namespace dibs::mysql {

namespace {
std::string micros_as_seconds(std::int64_t us) {
  // FROM_UNIXTIME takes seconds with a fraction; the session's time zone is UTC.
  const bool negative = us < 0;
  const auto a = negative ? -us : us;
  std::string frac = std::to_string(a % 1'000'000);
  frac.insert(0, 6 - frac.size(), '0');
  return (negative ? "-" : "") + std::to_string(a / 1'000'000) + "." + frac;
}
}  // namespace

std::string failed_condition(const table_names& n, const failed_rows& which) {
  std::string where = q(n.target) + " IS NULL AND `dibs_failed_at` IS NOT NULL";
  // LOCATE, not LIKE: the user's text may hold % or _, which LIKE would read as wildcards.
  if (!which.reason_quoted.empty()) where += " AND LOCATE(" + which.reason_quoted + ", `dibs_error`) > 0";
  // `=` in the column's collation, as failure_reasons' GROUP BY compares: the group it counted.
  if (!which.reason_is_quoted.empty()) where += " AND COALESCE(`dibs_error`, '') = " + which.reason_is_quoted;
  if (which.since_epoch_us) where += " AND `dibs_failed_at` >= FROM_UNIXTIME(" + micros_as_seconds(*which.since_epoch_us) + ")";
  if (which.since_ago_us)
    where += " AND `dibs_failed_at` >= NOW(6) - INTERVAL " + std::to_string(*which.since_ago_us) + " MICROSECOND";
  if (which.key_literals) {
    std::string list;
    for (const auto& k : *which.key_literals) list += (list.empty() ? "" : ",") + k;
    where += list.empty() ? " AND FALSE" : " AND " + q(n.key.column) + " IN (" + list + ")";
  }
  return where;
}

std::string retry_failed_rows(const table_names& n, const failed_rows& which) {
  return "UPDATE " + q(n.table) +
         " SET `dibs_failed_at` = NULL, `dibs_error` = NULL, `dibs_http_status` = NULL, `dibs_attempts` = 0, `dibs_lock_by` = NULL, "
         "`dibs_lock_token` = NULL, `dibs_lock_until` = NULL WHERE " + failed_condition(n, which);
}

std::string failure_reasons(const table_names& n, std::size_t top) {
  const auto key = q(n.key.column);
  return "SELECT COALESCE(`dibs_error`, ''), COUNT(*), " + key_text(n.key, "MIN(" + key + ")") + ", " +
         key_text(n.key, "MAX(" + key + ")") + " FROM " + q(n.table) + " WHERE " +
         failed_condition(n, {}) + " GROUP BY COALESCE(`dibs_error`, '') ORDER BY COUNT(*) DESC, COALESCE(`dibs_error`, '') LIMIT " +
         std::to_string(top);
}

std::string failed_rows_listed(const table_names& n, const failed_rows& which, std::size_t limit, std::size_t offset) {
  const auto key = q(n.key.column);
  // The session's time zone is UTC: UNIX_TIMESTAMP reads the time as it was written.
  return "SELECT " + key_text(n.key, key) + ", CAST(" + q(n.source) + " AS CHAR), `dibs_error`, `dibs_http_status`, "
         "`dibs_attempts`, CAST(UNIX_TIMESTAMP(`dibs_failed_at`) * 1000000 AS SIGNED) FROM " + q(n.table) + " WHERE " +
         failed_condition(n, which) + " ORDER BY `dibs_failed_at`, " + key + " LIMIT " + std::to_string(limit) + " OFFSET " +
         std::to_string(offset);
}

}  // namespace dibs::mysql
