#include "mysql_shared_rate.hpp"

#include "sql_session.hpp"

#include "engine/src/server_number.hpp"

#include <algorithm>
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
// Every statement here runs on its own (autocommit): the row is locked only while one statement
// runs on the server, never across round trips, so a process frozen between two of them (SIGSTOP,
// a paused VM, a lost link) holds no other process back.
std::string ensure_row(const std::string& origin_quoted) {
  return "INSERT IGNORE INTO dibs_rate (origin) VALUES (" + origin_quoted + ")";
}
std::string take_span(const std::string& origin_quoted, std::int64_t span_us) {
  return std::string("UPDATE dibs_rate SET tat_us = (@dibs_start := GREATEST(tat_us, (@dibs_now := ") + now_us +
         "), paused_until_us)) + " + std::to_string(span_us) + " WHERE origin = " + origin_quoted;
}
std::string taken_row(const std::string& origin_quoted) {
  return "SELECT @dibs_start, paused_until_us, @dibs_now FROM dibs_rate WHERE origin = " + origin_quoted;
}
std::string read_row(const std::string& origin_quoted) {
  return std::string("SELECT tat_us, paused_until_us, ") + now_us + " FROM dibs_rate WHERE origin = " + origin_quoted;
}
std::string pause_row(const std::string& origin_quoted, std::int64_t for_us) {
  const auto until = std::string("(") + now_us + " + " + std::to_string(std::max<std::int64_t>(for_us, 0)) + ")";
  return "INSERT INTO dibs_rate (origin, paused_until_us) VALUES (" + origin_quoted + ", " + until +
         ") ON DUPLICATE KEY UPDATE paused_until_us = GREATEST(paused_until_us, " + until + ")";
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
  const char* said = "MySQL/MariaDB";
  return {{server_number<std::int64_t>(r[0], said), server_number<std::int64_t>(r[1], said)},
          server_number<std::int64_t>(r[2], said)};
}
}  // namespace

mysql_shared_rate::mysql_shared_rate(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {
  store_->execute(rate_sql::create_table());
}

rate_block mysql_shared_rate::take_block(const rate_block_request& r) {
  rate_block out;
  // One session (the @variables are the session's), no transaction.
  store_->in_session([&](sql_session& c) {
    const auto origin = c.quote(r.origin);
    c.execute(rate_sql::ensure_row(origin));
    c.execute(rate_sql::take_span(origin, static_cast<std::int64_t>(std::max<std::uint32_t>(r.want, 1)) *
                                              std::max<std::int64_t>(r.interval.count(), 1)));
    const auto row = parse(c.select(rate_sql::taken_row(origin)));
    out = taken_block(row.state.tat_us, row.state.paused_until_us, row.now_us, r.want);
  });
  return out;
}

void mysql_shared_rate::pause(const std::string& origin, std::chrono::microseconds for_) {
  store_->in_session([&](sql_session& c) { c.execute(rate_sql::pause_row(c.quote(origin), for_.count())); });
}

std::chrono::microseconds mysql_shared_rate::paused_for(const std::string& origin) {
  std::chrono::microseconds out{0};
  store_->in_session([&](sql_session& c) {
    const auto rows = c.select(rate_sql::read_row(c.quote(origin)));
    if (rows.empty()) return;  // never used, never paused
    const auto row = parse(rows);
    out = std::chrono::microseconds(paused_for_us(row.state, row.now_us));
  });
  return out;
}

}  // namespace dibs::sql
