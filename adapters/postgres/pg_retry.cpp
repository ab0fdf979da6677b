#include "pg_retry.hpp"
#include "adapters/postgres/pg_quote.hpp"

namespace dibs::pg {

namespace {
std::string failed_condition(const table_names& n) { return q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NOT NULL"; }


// The rows `which` selects, its values as parameters of `s`.
std::string selected_condition(const table_names& n, const failed_rows& which, statement& s) {
  std::string where = failed_condition(n);
  auto param = [&s](std::string value) {
    s.params.emplace_back(std::move(value));
    return "$" + std::to_string(s.params.size());
  };
  if (!which.ids.empty()) where += " AND " + q(n.key.column) + "::text = ANY(" + param(text_array(which.ids)) + "::text[])";
  // strpos, not LIKE: the user's text may hold % or _, which LIKE would read as wildcards.
  if (!which.reason.empty()) where += " AND strpos(\"dibs_error\", " + param(which.reason) + "::text) > 0";
  if (which.reason_is) where += " AND coalesce(\"dibs_error\", '') = " + param(*which.reason_is) + "::text";
  if (which.since_epoch_us)
    where += " AND \"dibs_failed_at\" >= to_timestamp(" + param(std::to_string(*which.since_epoch_us)) + "::double precision / 1e6)";
  if (which.since_ago_us)
    where += " AND \"dibs_failed_at\" >= now() - " + param(std::to_string(*which.since_ago_us)) +
             "::bigint * interval '1 microsecond'";
  return where;
}
}  // namespace

statement retry_failed_rows(const table_names& n, const failed_rows& which) {
  statement s;
  const auto where = selected_condition(n, which, s);
  s.sql = "UPDATE " + q(n.table) +
          " SET \"dibs_failed_at\" = NULL, \"dibs_error\" = NULL, \"dibs_http_status\" = NULL, \"dibs_attempts\" = 0, \"dibs_lock_by\" = NULL, "
          "\"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL WHERE " + where;
  return s;
}

statement failure_reasons(const table_names& n, std::size_t top) {
  statement s;
  // As text: min(uuid) has no aggregate before PostgreSQL 16; any two ids make an example.
  const auto key = q(n.key.column) + "::text";
  s.sql = "SELECT coalesce(\"dibs_error\", ''), count(*), min(" + key + "), max(" + key + ") FROM " + q(n.table) + " WHERE " +
          failed_condition(n) + " GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $1";
  s.params.emplace_back(std::to_string(top));
  return s;
}

statement failed_rows_listed(const table_names& n, const failed_rows& which, std::size_t limit, std::size_t offset) {
  statement s;
  const auto where = selected_condition(n, which, s);
  const auto key = q(n.key.column);
  s.sql = "SELECT " + key + "::text, " + q(n.source) + "::text, \"dibs_error\", \"dibs_http_status\", \"dibs_attempts\", "
          "(extract(epoch FROM \"dibs_failed_at\") * 1e6)::bigint FROM " + q(n.table) + " WHERE " + where +
          " ORDER BY \"dibs_failed_at\", " + key + " LIMIT " + std::to_string(limit) + " OFFSET " + std::to_string(offset);
  return s;
}

}  // namespace dibs::pg
