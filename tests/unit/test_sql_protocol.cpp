// The MySQL protocol pieces, read without a server: SQL text and connection strings.
#include <adapters/mysql/mysql_uri.hpp>
#include <adapters/mysql/rights_probe.hpp>
#include <adapters/mysql/mysql_protocol.hpp>

#include <catch2/catch.hpp>

using namespace dibs::mysql;

TEST_CASE("the claim finds and locks its rows in one SKIP LOCKED statement, in the index's order", "[sql]") {
  table_names n;
  // From the random point up, then (when short) below it: no candidate read that could go stale.
  CHECK(claim_rows(n, 1'000'000, 17, true, 100, 60'000'000) ==
        "SELECT `id`, `originatingIp`, `dibs_attempts` + 1, NOW(6) + INTERVAL 60000000 MICROSECOND FROM `jobs` FORCE INDEX "
        "(`dibs_claim`) WHERE `dibs_open` = 1 AND (`dibs_lock_until` IS NULL OR `dibs_lock_until` < NOW(6)) AND (`dibs_lock_until` IS NULL OR "
        "`dibs_lock_until` < NOW(6) - INTERVAL 1000000 MICROSECOND OR `dibs_lock_token` = 0) AND `dibs_pick` >= 17 ORDER BY `dibs_pick`, `dibs_lock_until`, `id` LIMIT 100 FOR UPDATE SKIP LOCKED");
  CHECK_THAT(claim_rows(n, 0, 17, false, 30, 60'000'000),
             Catch::Contains("AND `dibs_pick` < 17 ORDER BY `dibs_pick`, `dibs_lock_until`, `id` LIMIT 30 FOR UPDATE SKIP LOCKED"));
  // The ORDER BY must be the claim index's own key order (a sort would lock every candidate first).
  CHECK_THAT(create_table(n), Catch::Contains("KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `dibs_lock_until`)"));
  CHECK(set_lease(n, {"3", "5"}, "'w-1'", 99, 60'000'000) ==
        "UPDATE `jobs` SET `dibs_lock_by` = 'w-1', `dibs_lock_token` = 99, `dibs_lock_until` = NOW(6) + INTERVAL 60000000 MICROSECOND, "
        "`dibs_attempts` = `dibs_attempts` + 1 WHERE `id` IN (3,5)");
}

TEST_CASE("fenced writes first lock exactly the rows still held", "[sql]") {
  table_names n;
  CHECK(held_rows(n, {{"3", 7}, {"5", 7}}, "'w'", true) ==
        "SELECT `id` FROM `jobs` WHERE `id` IN (3,5) AND `dibs_lock_token` = CASE `id` WHEN 3 THEN 7 WHEN 5 THEN 7 END AND "
        "`dibs_lock_by` = 'w' AND `dibs_lock_until` >= NOW(6) ORDER BY `id` FOR UPDATE");
  CHECK(complete_rows(n, {"3", "5"}, {"'{\\\"a\\\":1}'", "'{}'"}) ==
        "UPDATE `jobs` SET `location` = CASE `id` WHEN 3 THEN '{\\\"a\\\":1}' WHEN 5 THEN '{}' END, `dibs_lock_by` = NULL, "
        "`dibs_lock_token` = NULL, `dibs_lock_until` = NULL, `dibs_error` = NULL WHERE `id` IN (3,5)");
  CHECK(delete_rows(n, {"3"}) == "DELETE FROM `jobs` WHERE `id` IN (3)");
  // --on-done mark's first try: the fence as the UPDATE's WHERE (all changed = all held).
  CHECK(complete_held_rows(n, {{"3", 7}, {"5", 7}}, "'w'", {"'{}'", "'[]'"}) ==
        "UPDATE `jobs` SET `location` = CASE `id` WHEN 3 THEN '{}' WHEN 5 THEN '[]' END, `dibs_lock_by` = NULL, "
        "`dibs_lock_token` = NULL, `dibs_lock_until` = NULL, `dibs_error` = NULL WHERE `id` IN (3,5) AND `dibs_lock_token` = CASE `id` WHEN 3 "
        "THEN 7 WHEN 5 THEN 7 END AND `dibs_lock_by` = 'w' AND `dibs_lock_until` >= NOW(6)");
  // MariaDB: the same fence and the delete in one statement, which names the rows it removed.
  CHECK(delete_held_rows(n, {{"3", 7}, {"5", 7}}, "'w'") ==
        "DELETE FROM `jobs` WHERE `id` IN (3,5) AND `dibs_lock_token` = CASE `id` WHEN 3 THEN 7 WHEN 5 THEN 7 END AND "
        "`dibs_lock_by` = 'w' AND `dibs_lock_until` >= NOW(6) RETURNING `id`");
  CHECK(release_rows(n, {"3"}, 0, "'shutdown'") ==
        "UPDATE `jobs` SET `dibs_lock_by` = NULL, `dibs_lock_token` = NULL, `dibs_lock_until` = NULL, `dibs_error` = 'shutdown' WHERE `id` IN (3)");
  CHECK(release_rows(n, {"3"}, 2'000'000, "'HTTP 503'") ==
        "UPDATE `jobs` SET `dibs_lock_token` = 0, `dibs_lock_until` = NOW(6) + INTERVAL 2000000 MICROSECOND, `dibs_error` = 'HTTP 503' WHERE `id` IN (3)");
  CHECK_THAT(fail_row(n, "3", "'HTTP 404'", 404), Catch::Contains("`dibs_failed_at` = NOW(6), `dibs_error` = 'HTTP 404', `dibs_http_status` = 404"));
}

TEST_CASE("rows are addressed by the table's own key: its column, its literals, its text", "[sql]") {
  table_names n{"people", "ip", "geo", row_key{"code", key_kind::text, true}};
  CHECK_THAT(claim_rows(n, 0, 17, true, 10, 1), Catch::StartsWith("SELECT `code`, `ip`, "));
  CHECK_THAT(claim_rows(n, 0, 17, true, 10, 1), Catch::Contains("ORDER BY `dibs_pick`, `dibs_lock_until`, `code` LIMIT 10"));
  CHECK(held_rows(n, {{"'A-1'", 7}}, "'w'", false) ==
        "SELECT `code` FROM `people` WHERE `code` IN ('A-1') AND `dibs_lock_token` = CASE `code` WHEN 'A-1' THEN 7 END AND "
        "`dibs_lock_by` = 'w' ORDER BY `code` FOR UPDATE");
  CHECK_THAT(complete_rows(n, {"'A-1'"}, {"'{}'"}), Catch::Contains("CASE `code` WHEN 'A-1' THEN '{}' END"));
  CHECK(fail_row(n, "'A-1'", "'x'", 0) ==
        "UPDATE `people` SET `dibs_failed_at` = NOW(6), `dibs_error` = 'x', `dibs_http_status` = 0, `dibs_lock_by` = NULL, `dibs_lock_token` = NULL, "
        "`dibs_lock_until` = NULL WHERE `code` = 'A-1'");
  // A binary key reads as hex; a key that is not the primary one does not order the claim (the
  // server would sort, locking every candidate first).
  table_names b{"blobs", "ip", "geo", row_key{"id", key_kind::binary, false}};
  CHECK_THAT(claim_rows(b, 0, 17, true, 10, 1), Catch::StartsWith("SELECT HEX(`id`), `ip`, "));
  CHECK_THAT(claim_rows(b, 0, 17, true, 10, 1), Catch::Contains("ORDER BY `dibs_pick`, `dibs_lock_until` LIMIT 10"));
  CHECK_THAT(delete_held_rows(b, {{"X'0A'", 1}}, "'w'"), Catch::EndsWith("RETURNING HEX(`id`)"));
  CHECK(sample_open_row(b, false, false) == "SELECT HEX(`id`) FROM `blobs` WHERE `dibs_open` = 1 LIMIT 1");
}

TEST_CASE("before a run, no-op statements show the rights it needs, and the GRANT names the user as the server does", "[sql]") {
  const table_names n{"jobs", "ip", "geo"};
  const auto probes = rights_probes(n, true);
  REQUIRE(probes.size() == 3);
  CHECK(probes[0].right == "SELECT");
  CHECK(probes[0].sql == "SELECT `id`, `ip`, `geo`, `dibs_lock_by`, `dibs_lock_token`, `dibs_lock_until`, `dibs_attempts`, `dibs_error`, `dibs_http_status`, "
                         "`dibs_failed_at` FROM `jobs` LIMIT 0");
  CHECK(probes[1].sql == "UPDATE `jobs` SET `geo` = `geo`, `dibs_lock_by` = `dibs_lock_by`, `dibs_lock_token` = `dibs_lock_token`, `dibs_lock_until` = "
                         "`dibs_lock_until`, `dibs_attempts` = `dibs_attempts`, `dibs_error` = `dibs_error`, `dibs_http_status` = `dibs_http_status`, `dibs_failed_at` = "
                         "`dibs_failed_at` WHERE FALSE");
  CHECK(probes[2].sql == "DELETE FROM `jobs` WHERE FALSE");
  CHECK(rights_probes(n, false).size() == 2);
  CHECK(grant_statement(n, "dibs_test", "ro@%", false) == "GRANT SELECT, UPDATE ON `dibs_test`.`jobs` TO 'ro'@'%'");
  CHECK(grant_statement(n, "d", "o'neil@10.0.0.1", true) == "GRANT SELECT, UPDATE, DELETE ON `d`.`jobs` TO 'o''neil'@'10.0.0.1'");
}

TEST_CASE("the table keeps the lease columns and indexes the open rows", "[sql]") {
  table_names n{"geo_jobs", "ip", "geo"};
  const auto ddl = create_table(n);
  CHECK_THAT(ddl, Catch::Contains("CREATE TABLE IF NOT EXISTS `geo_jobs`"));
  CHECK_THAT(ddl, Catch::Contains("`ip` VARCHAR(255) NULL"));
  CHECK_THAT(ddl, Catch::Contains("`geo` JSON NULL"));
  CHECK_THAT(ddl, Catch::Contains("`dibs_lock_until` DATETIME(6) NULL"));
  CHECK_THAT(ddl, Catch::Contains("`dibs_open` TINYINT AS (IF(`geo` IS NULL AND `dibs_failed_at` IS NULL, 1, NULL)) STORED"));
  CHECK_THAT(ddl, Catch::Contains("KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `dibs_lock_until`)"));
  CHECK_THROWS_WITH(check_names({"jobs; DROP TABLE x", "a", "b"}), Catch::Contains("bad SQL name"));
  CHECK_THROWS_WITH(check_names({"jobs", "a", "a"}), Catch::Contains("must be different"));
}

TEST_CASE("mysql:// connection strings", "[sql][uri]") {
  auto u = parse_mysql_uri("mysql://app:p%40ss@db.local:3307/enrich?table=geo_jobs");
  CHECK(u.user == "app");
  CHECK(u.password == "p@ss");
  CHECK(u.host == "db.local");
  CHECK(u.port == 3307);
  CHECK(u.database == "enrich");
  CHECK(u.table == "geo_jobs");
  auto d = parse_mysql_uri("mysql://root@127.0.0.1/x");
  CHECK(d.port == 3306);
  CHECK(d.table == "jobs");
  CHECK(d.password.empty());
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://u:secret@h:99999/x"), Catch::Contains("port") && !Catch::Contains("secret"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://u:secret@h"), Catch::Contains("no database") && !Catch::Contains("secret"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://h/x?tabel=y"), Catch::Contains("unknown option 'tabel'"));
  // Found by fuzzing: a password with an unencoded '?' reached the error as an "option".
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app:secret/x?more@h/db"),
                    !Catch::Contains("secret") && !Catch::Contains("more") && Catch::Contains("percent-encode"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app:hunter/2@h/db"),
                    !Catch::Contains("hunter") && Catch::Contains("the port is not a number"));
  CHECK_THROWS_WITH(parse_mysql_uri("postgres://h/x"), Catch::Contains("expected mysql://"));
}

TEST_CASE("the pre-flight reads the table's columns and one open row, locking nothing", "[sql][preflight]") {
  table_names n;
  CHECK(table_columns(n) ==
        "SELECT `COLUMN_NAME` FROM information_schema.`COLUMNS` WHERE `TABLE_SCHEMA` = DATABASE() AND `TABLE_NAME` = "
        "'jobs' ORDER BY `ORDINAL_POSITION`");
  CHECK(sample_open_row(n, true, true) ==
        "SELECT `id`, `originatingIp` FROM `jobs` WHERE `dibs_open` = 1 AND `originatingIp` IS NOT NULL LIMIT 1");
  CHECK(sample_open_row(n, true, false) == "SELECT `id`, `originatingIp` FROM `jobs` WHERE `dibs_open` = 1 LIMIT 1");
  // A table without the column: the id only, so the statement itself can't fail on the name.
  CHECK(sample_open_row(n, false, true) == "SELECT `id` FROM `jobs` WHERE `dibs_open` = 1 LIMIT 1");
}

TEST_CASE("sessions run at READ COMMITTED unless the server logs statements to its binary log", "[sql]") {
  CHECK(read_committed_allowed(false, "STATEMENT"));  // no binary log: nothing is refused
  CHECK(read_committed_allowed(true, "ROW"));
  CHECK(read_committed_allowed(true, "MIXED"));  // the server logs RC's writes as rows
  CHECK_FALSE(read_committed_allowed(true, "STATEMENT"));
}
