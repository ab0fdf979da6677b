// The shared rate's arithmetic (rate_bucket.hpp), and the statements that carry it (SQL text).
#include <adapters/mysql/mysql_shared_rate.hpp>
#include <adapters/postgres/pg_shared_rate.hpp>

#include "engine/src/rate_bucket.hpp"

#include <catch2/catch.hpp>

using namespace dibs;
using std::chrono::microseconds;

TEST_CASE("a block of an unused record starts now and moves the schedule on by its slots", "[rate][shared-rate]") {
  const auto g = grant_block({}, 1'000'000, 5, 100'000);
  CHECK(g.block.granted == 5);
  CHECK(g.block.starts_in == microseconds(0));
  CHECK(g.block.paused_for == microseconds(0));
  CHECK(g.next.tat_us == 1'500'000);
  CHECK(g.next.paused_until_us == 0);
}

TEST_CASE("blocks taken at once by several processes follow one another", "[rate][shared-rate]") {
  rate_bucket_state s;
  std::int64_t expected_start = 0;
  for (int process = 0; process < 4; ++process) {
    const auto g = grant_block(s, 1'000'000, 5, 100'000);  // all at the same store time
    CHECK(g.block.starts_in == microseconds(expected_start));
    expected_start += 500'000;
    s = g.next;
  }
  CHECK(s.tat_us == 3'000'000);  // 20 slots of 0.1 s from 1 s: nobody shares a slot
}

TEST_CASE("slots left unused in the past are gone, not saved up for a burst", "[rate][shared-rate]") {
  const rate_bucket_state s{1'200'000, 0};
  const auto g = grant_block(s, 9'000'000, 2, 100'000);
  CHECK(g.block.starts_in == microseconds(0));
  CHECK(g.next.tat_us == 9'200'000);
}

TEST_CASE("a pause holds every block until it ends, and is told", "[rate][shared-rate]") {
  auto s = pause_bucket({}, 1'000'000, 3'000'000);
  CHECK(s.paused_until_us == 4'000'000);
  s = pause_bucket(s, 2'000'000, 500'000);  // a shorter one does not cut it short
  CHECK(s.paused_until_us == 4'000'000);
  CHECK(pause_bucket(s, 2'000'000, -5).paused_until_us == 4'000'000);
  const auto g = grant_block(s, 2'500'000, 1, 100'000);
  CHECK(g.block.starts_in == microseconds(1'500'000));
  CHECK(g.block.paused_for == microseconds(1'500'000));
  CHECK(g.next.tat_us == 4'100'000);
  CHECK(paused_for_us(s, 5'000'000) == 0);
}

TEST_CASE("nonsense asks are taken as the least: one slot, one microsecond", "[rate][shared-rate]") {
  const auto g = grant_block({}, 10, 0, 0);
  CHECK(g.block.granted == 1);
  CHECK(g.next.tat_us == 11);
}

TEST_CASE("a block is half a second of the rate, at least one slot", "[rate][shared-rate]") {
  CHECK(block_size(45.0 / 60) == 1);  // ip-api's 45/min: every request asks the store
  CHECK(block_size(10) == 5);
  CHECK(block_size(20) == 10);
  CHECK(block_size(0) == 1);
  CHECK(block_size(1e12) == 100000);
}

TEST_CASE("the shared rate's statements read the server's clock when they run, one statement each", "[rate][shared-rate]") {
  // One autocommitted statement moves the schedule on: no row lock is held across round trips,
  // so a process frozen between two statements holds no other process back.
  CHECK(mysql::rate_sql::take_span("'o'", 500) ==
        "UPDATE dibs_rate SET tat_us = (@dibs_start := GREATEST(tat_us, (@dibs_now := CAST(UNIX_TIMESTAMP(SYSDATE(6)) * "
        "1000000 AS SIGNED)), paused_until_us)) + 500 WHERE origin = 'o'");
  CHECK(mysql::rate_sql::taken_row("'o'") == "SELECT @dibs_start, paused_until_us, @dibs_now FROM dibs_rate WHERE origin = 'o'");
  CHECK(mysql::rate_sql::ensure_row("'o'") == "INSERT IGNORE INTO dibs_rate (origin) VALUES ('o')");
  CHECK(mysql::rate_sql::pause_row("'o'", 9) ==
        "INSERT INTO dibs_rate (origin, paused_until_us) VALUES ('o', (CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED) + 9)) "
        "ON DUPLICATE KEY UPDATE paused_until_us = GREATEST(paused_until_us, (CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED) + 9))");
  const auto pg_take = pg::rate_sql::take_span("http://a:80", 500);
  CHECK(pg_take.sql.find("ON CONFLICT (origin) DO UPDATE SET tat_us = GREATEST(r.tat_us, ") != std::string::npos);
  CHECK(pg_take.sql.find("clock_timestamp()") != std::string::npos);
  CHECK(pg_take.sql.find("BEGIN") == std::string::npos);
  CHECK(pg_take.params == std::vector<std::optional<std::string>>{"http://a:80", "500"});
  CHECK(pg::rate_sql::pause_row("o", 9).params == std::vector<std::optional<std::string>>{"o", "9"});
}

TEST_CASE("a block taken in one statement starts where the store moved the schedule from", "[rate][shared-rate]") {
  const auto b = taken_block(1'000'500, 0, 1'000'000, 5);
  CHECK(b.granted == 5);
  CHECK(b.starts_in == std::chrono::microseconds(500));
  CHECK(b.paused_for == std::chrono::microseconds(0));
  const auto late = taken_block(900'000, 1'200'000, 1'000'000, 0);  // a start already past; a pause ahead
  CHECK(late.granted == 1);
  CHECK(late.starts_in == std::chrono::microseconds(0));
  CHECK(late.paused_for == std::chrono::microseconds(200'000));
}
