#include "mysql_shared_rate.hpp"

#include "sql_session.hpp"

#include <stdexcept>

namespace dibs::sql {

namespace rate_sql {
namespace {
// The server's clock, read when the statement runs (SYSDATE, not NOW: a statement that waited
// for the row's lock must not use the time it started at). The session's time zone is UTC.
constexpr const char* now_us = "CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)";
}  // namespace

std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_rate (origin VARCHAR(255) NOT NULL PRIMARY KEY, "
         "tat_us BIGINT NOT NULL DEFAULT 0, paused_until_us BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB";
}
// ON DUPLICATE KEY UPDATE takes the row's exclusive lock at once: two INSERT IGNOREs would each
// hold a shared lock and deadlock on the FOR UPDATE that follows.
std::string ensure_row(const std::string& origin_quoted) {
  return "INSERT INTO dibs_rate (origin) VALUES (" + origin_quoted + ") ON DUPLICATE KEY UPDATE origin = origin";
}
std::string lock_row(const std::string& origin_quoted) { return read_row(origin_quoted) + " FOR UPDATE"; }
std::string read_row(const std::string& origin_quoted) {
  return std::string("SELECT tat_us, paused_until_us, ") + now_us + " FROM dibs_rate WHERE origin = " + origin_quoted;
}
std::string write_row(const std::string& origin_quoted, const rate_bucket_state& s) {
  return "UPDATE dibs_rate SET tat_us = " + std::to_string(s.tat_us) + ", paused_until_us = " + std::to_string(s.paused_until_us) +
         " WHERE origin = " + origin_quoted;
}
}  // namespace rate_sql

namespace {
struct row_state {
  rate_bucket_state state;
  std::int64_t now_us = 0;
};
row_state parse(const std::vector<sql_row>& rows) {
  if (rows.empty() || rows[0].size() < 3 || !rows[0][2]) throw std::runtime_error("dibs_rate: the origin's row is missing");
  const auto& r = rows[0];
  return {{std::stoll(r[0].value_or("0")), std::stoll(r[1].value_or("0"))}, std::stoll(*r[2])};
}
}  // namespace

mysql_shared_rate::mysql_shared_rate(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {
  store_->in_transaction([](sql_session& c) { c.execute(rate_sql::create_table()); });
}

rate_block mysql_shared_rate::take_block(const rate_block_request& r) {
  rate_block out;
  store_->in_transaction([&](sql_session& c) {
    const auto origin = c.quote(r.origin);
    c.execute(rate_sql::ensure_row(origin));
    const auto row = parse(c.select(rate_sql::lock_row(origin)));
    const auto g = grant_block(row.state, row.now_us, r.want, r.interval.count());
    c.execute(rate_sql::write_row(origin, g.next));
    out = g.block;
  });
  return out;
}

void mysql_shared_rate::pause(const std::string& origin, std::chrono::microseconds for_) {
  store_->in_transaction([&](sql_session& c) {
    const auto o = c.quote(origin);
    c.execute(rate_sql::ensure_row(o));
    const auto row = parse(c.select(rate_sql::lock_row(o)));
    c.execute(rate_sql::write_row(o, pause_bucket(row.state, row.now_us, for_.count())));
  });
}

std::chrono::microseconds mysql_shared_rate::paused_for(const std::string& origin) {
  std::chrono::microseconds out{0};
  store_->in_transaction([&](sql_session& c) {
    const auto rows = c.select(rate_sql::read_row(c.quote(origin)));
    if (rows.empty()) return;  // never used, never paused
    const auto row = parse(rows);
    out = std::chrono::microseconds(paused_for_us(row.state, row.now_us));
  });
  return out;
}

}  // namespace dibs::sql
