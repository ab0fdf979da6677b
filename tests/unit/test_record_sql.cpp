// The statements of dibs's own records on the SQL stores (adapters/sql/record_sql.hpp), read
// without a server: each a single autocommitted statement, timed by the server's clock when it
// runs, its values as placeholders.
#include <adapters/sql/record_sql.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace dibs::sql_common;

namespace {
const record_kind rate{"dibs_rate", "origin", {"tat_us", "paused_until_us"}, {}, ""};
const record_kind answers{"dibs_answers", "digest", {}, {"request", "answer"}, "stored_at"};
}  // namespace

TEST_CASE("a kind's table has its key, its numbers, its texts and its stamp", "[records][unit]") {
  CHECK(record_sql::create_table(rate, mysql_records) ==
        "CREATE TABLE IF NOT EXISTS dibs_rate (origin VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY, tat_us BIGINT NOT NULL DEFAULT 0, "
        "paused_until_us BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin");
  CHECK(record_sql::create_table(answers, pg_records) ==
        "CREATE TABLE IF NOT EXISTS dibs_answers (digest text PRIMARY KEY, request text, answer text, stored_at timestamptz)");
}

TEST_CASE("a read returns the server's clock with or without a record", "[records][unit]") {
  const auto r = record_sql::read(rate, mysql_records, "http://a:80");
  CHECK(r.sql ==
        "SELECT CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED), t.origin, t.tat_us, t.paused_until_us, NULL FROM "
        "(SELECT 1 AS one) AS o LEFT JOIN dibs_rate AS t ON t.origin = $1");
  REQUIRE(r.params.size() == 1);
  CHECK(r.params[0].value == "http://a:80");
  CHECK_FALSE(r.params[0].number);
  const auto a = record_sql::read(answers, pg_records, "d");
  CHECK(a.sql.find("(extract(epoch from clock_timestamp() - t.stored_at) * 1000000)::bigint") != std::string::npos);
}

TEST_CASE("a swap writes over the numbers it read, or makes the record where none is", "[records][unit]") {
  const auto u = record_sql::update_seen(rate, pg_records, "o", {10, 20}, {30, 20});
  CHECK(u.sql == "UPDATE dibs_rate SET tat_us = $1, paused_until_us = $2 WHERE origin = $3 AND tat_us = $4 AND paused_until_us = $5");
  REQUIRE(u.params.size() == 5);
  CHECK(u.params[0].value == "30");
  CHECK(u.params[0].number);
  CHECK(u.params[3].value == "10");
  // Not INSERT IGNORE, which would turn any refusal into a warning; an existing key is left as it is.
  CHECK(record_sql::insert_new(rate, mysql_records, "o", {1, 2}).sql ==
        "INSERT INTO dibs_rate (origin, tat_us, paused_until_us) VALUES ($1, $2, $3) ON DUPLICATE KEY UPDATE origin = origin");
  CHECK(record_sql::insert_new(rate, pg_records, "o", {1, 2}).sql ==
        "INSERT INTO dibs_rate (origin, tat_us, paused_until_us) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING");
}

TEST_CASE("a put replaces each record whole and stamps it with the server's clock", "[records][unit]") {
  const auto p = record_sql::put(answers, mysql_records, {{"d1", {}, {"GET /1", "{}"}, {}}, {"d2", {}, {"GET /2", "[]"}, {}}});
  CHECK(p.sql ==
        "INSERT INTO dibs_answers (digest, request, answer, stored_at) VALUES ($1, $2, $3, NOW(6)), ($4, $5, $6, "
        "NOW(6)) ON DUPLICATE KEY UPDATE request = VALUES(request), answer = VALUES(answer), stored_at = VALUES(stored_at)");
  CHECK(p.params.size() == 6);
  CHECK(record_sql::put(answers, pg_records, {{"d1", {}, {"r", "a"}, {}}}).sql ==
        "INSERT INTO dibs_answers (digest, request, answer, stored_at) VALUES ($1, $2, $3, clock_timestamp()) ON CONFLICT "
        "(digest) DO UPDATE SET request = EXCLUDED.request, answer = EXCLUDED.answer, stored_at = EXCLUDED.stored_at");
  // The old ones a few at a time, each statement short.
  CHECK(record_sql::remove_older(answers, mysql_records, 5, 100).sql ==
        "DELETE FROM dibs_answers WHERE stored_at < NOW(6) - INTERVAL $1 MICROSECOND LIMIT 100");
  CHECK(record_sql::remove_older(answers, pg_records, 5, 100).sql ==
        "DELETE FROM dibs_answers WHERE digest IN (SELECT digest FROM dibs_answers WHERE stored_at < clock_timestamp() - "
        "$1::bigint * interval '1 microsecond' LIMIT 100)");
}

TEST_CASE("a put is split into statements under the server's limit, and a record too large alone is left out", "[records][unit]") {
  auto rec = [](std::size_t answer_bytes) { return own_record{std::string(64, 'd'), {}, {"GET /", std::string(answer_bytes, 'a')}, {}}; };
  // 4,000 bytes: 3,000 for a statement, 512 of them its own words; a record of 100 bytes costs
  // 64 + 128 + 2 * (5 + 8) + 2 * 100 + 8 = 426.
  CHECK(record_sql::put_runs({rec(100), rec(100), rec(100), rec(100), rec(100), rec(100), rec(100)}, 4000) ==
        std::vector<std::vector<std::size_t>>{{0, 1, 2, 3, 4}, {5, 6}});
  CHECK(record_sql::put_runs({rec(100), rec(2000), rec(10)}, 4000) == std::vector<std::vector<std::size_t>>{{0, 2}});
  CHECK(record_sql::put_runs({}, 4000).empty());
  std::vector<own_record> many(1200, rec(1));
  const auto runs = record_sql::put_runs(many, 64u << 20);
  REQUIRE(runs.size() == 3);  // 500 records a statement at most: PostgreSQL binds 65,535 values
  CHECK(runs[0].size() == 500);
  CHECK(runs[2].size() == 200);
}
