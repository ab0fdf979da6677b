#include "mysql_shared_rate.hpp"

#include "mysql_session.hpp"

#include <adapters/sql/rate_record.hpp>

#include <algorithm>
#include <stdexcept>

namespace dibs::mysql {

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

mysql_shared_rate::mysql_shared_rate(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {
  store_->execute(rate_sql::create_table());
}

rate_block mysql_shared_rate::take_block(const rate_block_request& r) {
  rate_block out;
  // One session (the @variables are the session's), no transaction.
  store_->in_session([&](mysql_session& c) {
    const auto origin = c.quote(r.origin);
    c.execute(rate_sql::ensure_row(origin));
    c.execute(rate_sql::take_span(origin, sql_common::span_us(r)));
    out = sql_common::taken_block_of(c.select(rate_sql::taken_row(origin)), r.want, "MySQL/MariaDB");
  });
  return out;
}

void mysql_shared_rate::pause(const std::string& origin, std::chrono::microseconds for_) {
  store_->in_session([&](mysql_session& c) { c.execute(rate_sql::pause_row(c.quote(origin), for_.count())); });
}

std::chrono::microseconds mysql_shared_rate::paused_for(const std::string& origin) {
  std::chrono::microseconds out{0};
  store_->in_session([&](mysql_session& c) {
    out = sql_common::paused_for_of(c.select(rate_sql::read_row(c.quote(origin))), "MySQL/MariaDB");
  });
  return out;
}

std::shared_ptr<shared_rate_store> mysql_store::open_shared_rate() { return std::make_shared<mysql_shared_rate>(shared_from_this()); }

}  // namespace dibs::mysql
