#include "mysql_answers.hpp"

#include "sql_session.hpp"

namespace dibs::sql {

namespace answers_sql {
std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_answers (digest CHAR(64) NOT NULL PRIMARY KEY, request TEXT NOT NULL, "
         "answer LONGTEXT NOT NULL, stored_at DATETIME(6) NOT NULL) ENGINE=InnoDB";
}
std::string find(const std::string& digest_quoted, std::chrono::milliseconds ttl) {
  return "SELECT answer, TIMESTAMPDIFF(MICROSECOND, stored_at, NOW(6)) DIV 1000 FROM dibs_answers WHERE digest = " +
         digest_quoted + " AND stored_at > NOW(6) - INTERVAL " + std::to_string(ttl.count()) + "000 MICROSECOND";
}
std::string keep(const std::vector<std::array<std::string, 3>>& rows_quoted, bool mariadb) {
  std::string values;
  for (const auto& r : rows_quoted)
    values += (values.empty() ? "(" : ", (") + r[0] + ", " + r[1] + ", " + r[2] + ", NOW(6))";
  return std::string(mariadb ? "SET STATEMENT innodb_lock_wait_timeout = 2 FOR INSERT"
                             : "INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */") +
         " INTO dibs_answers (digest, request, answer, stored_at) VALUES " + values +
         " ON DUPLICATE KEY UPDATE request = VALUES(request), answer = VALUES(answer), stored_at = VALUES(stored_at)";
}
}  // namespace answers_sql

mysql_answers::mysql_answers(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {
  store_->execute(answers_sql::create_table());
  mariadb_ = store_->query_value("SELECT VERSION()").value_or("").find("MariaDB") != std::string::npos;
}

std::optional<kept_answer> mysql_answers::find(const answer_key& k, std::chrono::milliseconds ttl) {
  std::optional<kept_answer> out;
  store_->in_session([&](sql_session& c) {
    const auto rows = c.select(answers_sql::find(c.quote(k.digest), ttl));
    if (rows.empty() || rows[0].size() < 2 || !rows[0][0]) return;
    out = kept_answer{*rows[0][0], std::chrono::milliseconds(std::stoll(rows[0][1].value_or("0")))};
  });
  return out;
}

void mysql_answers::keep(const std::vector<std::pair<answer_key, std::string>>& answers) {
  if (answers.empty()) return;
  store_->in_session([&](sql_session& c) {
    std::vector<std::array<std::string, 3>> rows;
    for (const auto& [k, answer] : answers) rows.push_back({c.quote(k.digest), c.quote(k.request), c.quote(answer)});
    c.execute(answers_sql::keep(rows, mariadb_));
  });
}

}  // namespace dibs::sql
