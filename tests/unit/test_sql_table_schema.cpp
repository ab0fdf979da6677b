// The user's own MySQL/MariaDB table: what it lacks, and the ALTER TABLE that adds it (no server).
#include <adapters/mysql/mysql_table_schema.hpp>

#include "engine/src/init_hint.hpp"
#include <dibs/missing_table_error.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>

using namespace dibs::mysql;
using dibs::sql_common::schema_gap;
using dibs::sql_common::table_shape;

namespace {
const std::vector<std::string> mysql_columns{"id",         "originatingIp", "location", "dibs_lock_by",   "dibs_lock_token", "dibs_lock_until",
                                           "dibs_attempts",   "dibs_error",         "dibs_http_status", "dibs_failed_at", "dibs_pick", "dibs_open"};

// As mysql_store.cpp reads a table: its shape against what dibs needs, and the refusal.
schema_gap find_gap(const table_names& n, const table_shape& shape, bool recorded_layout = false) {
  return dibs::sql_common::find_gap(n.source, table_needs_of(n), shape, recorded_layout);
}
std::string gap_message(const table_names& n, const schema_gap& gap, const std::string& hint) {
  return dibs::sql_common::gap_message(n.table, gap, table_needs_of(n), alter_table(n, gap) + ";", hint);
}
}  // namespace

TEST_CASE("a table created by dibs lacks nothing", "[sql][schema]") {
  table_names n;
  const auto gap = find_gap(n, {mysql_columns, {"PRIMARY", "dibs_claim"}});
  CHECK(gap.complete());
  CHECK(alter_table(n, gap).empty());
}

TEST_CASE("MySQL column names match whatever their case", "[sql][schema]") {
  table_names n;
  std::vector<std::string> upper;
  for (auto c : mysql_columns) {
    for (auto& ch : c) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    upper.push_back(c);
  }
  CHECK(find_gap(n, {upper, {"DIBS_CLAIM"}}).complete());
}

TEST_CASE("a user's table with only its data gets every dibs column and the claim index", "[sql][schema]") {
  table_names n{"people", "ip", "geo"};
  const auto gap = find_gap(n, {{"person_id", "ip", "name"}, {"PRIMARY"}});
  CHECK_FALSE(gap.source_missing);
  CHECK(gap.columns == std::vector<std::string>{"id", "geo", "dibs_lock_by", "dibs_lock_token", "dibs_lock_until", "dibs_attempts", "dibs_error",
                                                "dibs_http_status", "dibs_failed_at", "dibs_pick", "dibs_open"});
  CHECK(gap.index_missing);
  const auto alter = alter_table(n, gap);
  CHECK_THAT(alter, Catch::StartsWith("ALTER TABLE `people` ADD COLUMN `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE KEY, "
                                      "ADD COLUMN `geo` JSON NULL, ADD COLUMN `dibs_lock_by` VARCHAR(128) NULL"));
  // dibs_open reads the target and failed_at, so it comes after them; the index after the columns.
  CHECK(alter.find("`dibs_open` TINYINT AS (IF(`geo` IS NULL AND `dibs_failed_at` IS NULL, 1, NULL)) STORED") >
        alter.find("ADD COLUMN `dibs_failed_at`"));
  CHECK_THAT(alter, Catch::EndsWith(", ADD KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `dibs_lock_until`)"));
}

TEST_CASE("only what is missing is added to a table dibs init prepared", "[sql][schema]") {
  table_names n;
  std::vector<std::string> cols = mysql_columns;
  cols.erase(std::find(cols.begin(), cols.end(), "dibs_failed_at"));
  const auto gap = find_gap(n, {cols, {"dibs_claim"}}, true);
  CHECK(gap.columns == std::vector<std::string>{"dibs_failed_at"});
  CHECK_FALSE(gap.index_missing);
  CHECK(alter_table(n, gap) == "ALTER TABLE `jobs` ADD COLUMN `dibs_failed_at` DATETIME(6) NULL");
  const auto only_index = find_gap(n, {mysql_columns, {"PRIMARY"}});
  CHECK(alter_table(n, only_index) == "ALTER TABLE `jobs` ADD KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `dibs_lock_until`)");
}

TEST_CASE("the refusal names the missing columns, the ALTER TABLE and dibs init", "[sql][schema]") {
  table_names n{"people", "ip", "geo"};
  const auto gap = find_gap(n, {{"id", "ip", "geo"}, {}});
  const auto hint = dibs::init_hint("mysql://app:***@db/x?table=people", "ip", "geo");
  // The library names its settings; the dibs program its flags (test_mysql_own_table.cpp, through the binary).
  CHECK(hint == "dibs init store 'mysql://app:***@db/x?table=people' source ip target geo");
  const auto said = gap_message(n, gap, hint);
  CHECK_THAT(said, Catch::Contains("table people lacks"));
  CHECK_THAT(said, Catch::Contains("(dibs_lock_by, dibs_lock_token, dibs_lock_until, dibs_attempts, dibs_error, dibs_http_status, dibs_failed_at, dibs_pick, "
                                   "dibs_open, index dibs_claim)"));
  CHECK_THAT(said, Catch::Contains("add it with: ALTER TABLE `people` ADD COLUMN `dibs_lock_by`"));
  CHECK_THAT(said, Catch::EndsWith("; or run: " + hint));
}

TEST_CASE("a table without the --source column is refused naming it and the columns there", "[sql][schema]") {
  table_names n{"people", "ip_addr", "geo"};
  const auto gap = find_gap(n, {{"id", "ip", "geo"}, {}});
  CHECK(gap.source_missing);
  CHECK_FALSE(gap.complete());
  const auto refused = dibs::missing_table_error::source_column(n.source, n.table, {"id", "ip", "geo"});
  CHECK(refused.kind == "column");
  CHECK(refused.existing == std::vector<std::string>{"id", "ip", "geo"});
  CHECK(std::string(refused.what()) == "no column 'ip_addr' in table people (its columns: id, ip, geo)");
}

TEST_CASE("a missing table is told by name, with the name meant when the caller finds one", "[sql][schema]") {
  const dibs::missing_table_error e("table", "jbos", "database dibs", {"jobs", "people"}, "create it with: dibs init");
  CHECK(std::string(e.what()) == "no table 'jbos' in database dibs (create it with: dibs init)");
  CHECK(e.message(std::string("jobs")) == "no table 'jbos' in database dibs; did you mean 'jobs'? (if 'jbos' is a new table: create it with: dibs init)");
  CHECK(e.existing.size() == 2);
}

TEST_CASE("the information_schema queries read the connection's database", "[sql][schema]") {
  CHECK(columns_query("jobs") ==
        "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
        "DATABASE() AND TABLE_NAME = 'jobs' ORDER BY ORDINAL_POSITION");
  CHECK(unique_keys_query("jobs") ==
        "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND "
        "TABLE_NAME = 'jobs' AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX");
  CHECK_THAT(indexes_query("jobs"), Catch::Contains("information_schema.STATISTICS"));
  CHECK_THAT(tables_query(), Catch::Contains("TABLE_SCHEMA = DATABASE()"));
}
