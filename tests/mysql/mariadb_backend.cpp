// MariaDB, as the conformance cases (tests/conformance/) see it: tables of the test database,
// dibs's mysql_store on them, and what differs in its SQL and in dibs's messages about it.
#include "support/database_dump.hpp"
#include "support/sql_backend.hpp"
#include "support/mysql_env.hpp"

#include <dibs/stores/mysql_store.hpp>

namespace dibs::test {

const backend& this_backend() {
  static const backend b = sql_backend<sql::mysql_store, sql::mysql_options>(
      "MariaDB", [] { return mysql_base_uri(); }, [](sql::mysql_options& o) { o.threads = 2; },
      sql_spelling{
          "originatingIp",
          "NOW(6) - INTERVAL 30 SECOND",
          "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '",
          "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '",
          "(id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, ip VARCHAR(64), name VARCHAR(32))",
          "(id BIGINT AUTO_INCREMENT PRIMARY KEY, ip VARCHAR(45) NOT NULL, geo JSON NULL)",
          "JSON_UNQUOTE(JSON_EXTRACT(geo, '$.query')) = ip",
          "1",
          [](const std::string& column) { return column; },
          [](const std::string& column, const std::string& field) {
            return "JSON_UNQUOTE(JSON_EXTRACT(" + column + ", '$." + field + "'))";
          },
          // a missing query counts
          "location IS NOT NULL AND NOT (JSON_UNQUOTE(JSON_EXTRACT(location, '$.query')) <=> originatingIp)",
          "stored_at - INTERVAL 2 HOUR",
          [](const std::string& table, const std::string& values) { return "INSERT IGNORE INTO " + table + " VALUES " + values; },
          [](const std::string& table, const std::string& comment) {
            return "ALTER TABLE " + table + " COMMENT = '" + comment + "'";
          },
          [](const std::string& table) {
            return "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" +
                   table + "'";
          },
          {"SELECT COALESCE(GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME), '') FROM information_schema.TABLES "
           "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'dibs\\_bench\\_%'"},
          [](const std::string& table) {
            return "(parent BIGINT UNSIGNED NOT NULL, FOREIGN KEY (parent) REFERENCES " + table + " (id)) ENGINE=InnoDB";
          },
          "Cannot delete or update a parent row: a foreign key constraint fails",
          [](const std::string& table) {
            return std::vector<std::string>{"CREATE TRIGGER " + table + "_broken BEFORE DELETE ON " + table +
                                            " FOR EACH ROW INSERT INTO " + table + "_nowhere VALUES (1)"};
          },
          // SIGNAL for that row's answer or delete.
          [](const std::string& t, const std::string& id) {
            return std::vector<std::string>{
                "CREATE TRIGGER " + t + "_refuse_u" + id + " BEFORE UPDATE ON " + t + " FOR EACH ROW BEGIN IF NEW.id = " +
                    id + " AND NEW.location IS NOT NULL THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no answer for " +
                    id + "'; END IF; END",
                "CREATE TRIGGER " + t + "_refuse_d" + id + " BEFORE DELETE ON " + t + " FOR EACH ROW BEGIN IF OLD.id = " +
                    id + " THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no delete of " + id + "'; END IF; END"};
          },
          "JSON",
          // As dibs made a table before its columns bore its prefix.
          [](const std::string& t) {
            return std::vector<std::string>{
                "CREATE TABLE " + t + " (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, ip VARCHAR(255) NULL, "
                "geo JSON NULL, lock_by VARCHAR(128) NULL, lock_token BIGINT UNSIGNED NULL, lock_until DATETIME(6) NULL, "
                "attempts INT NOT NULL DEFAULT 0, error TEXT NULL, http_status INT NULL, failed_at DATETIME(6) NULL, "
                "dibs_pick TINYINT UNSIGNED NOT NULL DEFAULT (FLOOR(RAND() * 256)), dibs_open TINYINT AS (IF(geo IS NULL AND "
                "failed_at IS NULL, 1, NULL)) STORED, KEY dibs_claim (dibs_open, dibs_pick, lock_until)) ENGINE=InnoDB"};
          },
          [](const std::string& t) {
            return "SELECT GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                   "TABLE_NAME = '" + t + "' AND COLUMN_NAME = 'dibs_open'";
          },
      },
      backend_facts{
          "table",
          "in database ",
          [](const std::string&) {
            return std::string("(geo, dibs_lock_by, dibs_lock_token, dibs_lock_until, dibs_attempts, dibs_error, dibs_http_status, dibs_failed_at, dibs_pick, "
                               "dibs_open, index dibs_claim)");
          },
          "; or run: ",
          [](const std::string& table) { return "ALTER TABLE `" + table + "` ADD COLUMN `geo` JSON NULL"; },
          13,  // 3 of the user's, 10 of dibs's
      },
      poison_facts{
          [](const std::string& table) {
            return std::vector<std::string>{
                "ALTER TABLE " + table + " MODIFY `dibs_error` VARCHAR(300) NULL",
                "CREATE TRIGGER " + table + "_policy BEFORE UPDATE ON " + table +
                    " FOR EACH ROW BEGIN IF NEW.location LIKE '%\"refuse\": true%' OR NEW.location LIKE '%\"refuse\":true%' "
                    "THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by policy'; END IF; END"};
          },
          [](const std::string&) {
            return std::vector<poison_row>{
                {17, "deep", "the store refused the answer: the answer is JSON nested 34 levels deep", true},
                {150, "deep", "the store refused the answer: the answer is JSON nested 34 levels deep", true},
                {42, "refuse", "the store refused the answer: refused by policy (error 1644)", true},
                {99, "longfail", "the API has no data: mmmm", true},
                {260, "longfail", "the API has no data: mmmm", true}};
          },
          200,
      });
  return b;
}

std::string everything_in_database() { return mariadb_dump(mysql_base_uri()); }

}  // namespace dibs::test
