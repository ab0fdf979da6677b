#include "pg_shared_rate.hpp"

#include <adapters/sql/rate_record.hpp>

#include <algorithm>
#include <stdexcept>

namespace dibs::pg {

namespace rate_sql {
namespace {
// clock_timestamp(), not now(): now() is the transaction's start, before the wait for the lock.
constexpr const char* now_us = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";
}  // namespace

std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_rate (origin text PRIMARY KEY, tat_us bigint NOT NULL DEFAULT 0, "
         "paused_until_us bigint NOT NULL DEFAULT 0)";
}
statement take_span(const std::string& origin, std::int64_t span_us) {
  const std::string now = now_us;
  return {"INSERT INTO dibs_rate AS r (origin, tat_us) VALUES ($1, " + now + " + $2::bigint) ON CONFLICT (origin) DO UPDATE "
          "SET tat_us = GREATEST(r.tat_us, " + now + ", r.paused_until_us) + $2::bigint "
          "RETURNING r.tat_us - $2::bigint, r.paused_until_us, " + now,
          {origin, std::to_string(span_us)}};
}
statement read_row(const std::string& origin) {
  return {std::string("SELECT tat_us, paused_until_us, ") + now_us + " FROM dibs_rate WHERE origin = $1", {origin}};
}
statement pause_row(const std::string& origin, std::int64_t for_us) {
  const std::string until = std::string("(") + now_us + " + $2::bigint)";
  return {"INSERT INTO dibs_rate AS r (origin, paused_until_us) VALUES ($1, " + until + ") ON CONFLICT (origin) DO UPDATE "
          "SET paused_until_us = GREATEST(r.paused_until_us, " + until + ")",
          {origin, std::to_string(std::max<std::int64_t>(for_us, 0))}};
}
}  // namespace rate_sql

pg_shared_rate::pg_shared_rate(std::shared_ptr<pg_store> store) : side_(std::move(store)) {
  side_.create_table(rate_sql::create_table());
}

rate_block pg_shared_rate::take_block(const rate_block_request& r) {
  return side_.with([&](pg_connection& c) {
    return sql_common::taken_block_of(c.exec_blocking(rate_sql::take_span(r.origin, sql_common::span_us(r))).rows, r.want,
                                      "PostgreSQL");
  });
}

void pg_shared_rate::pause(const std::string& origin, std::chrono::microseconds for_) {
  side_.with([&](pg_connection& c) { return c.exec_blocking(rate_sql::pause_row(origin, for_.count())).affected; });
}

std::chrono::microseconds pg_shared_rate::paused_for(const std::string& origin) {
  return side_.with([&](pg_connection& c) {
    return sql_common::paused_for_of(c.exec_blocking(rate_sql::read_row(origin)).rows, "PostgreSQL");
  });
}

std::shared_ptr<shared_rate_store> pg_store::open_shared_rate() { return std::make_shared<pg_shared_rate>(shared_from_this()); }

}  // namespace dibs::pg
