#include "mysql_answers.hpp"

#include "mysql_session.hpp"

#include "engine/src/server_number.hpp"

namespace dibs::mysql {

namespace answers_sql {
std::string create_table() {
  // utf8mb4 whatever the database's default (latin1 on MariaDB before 11.6 would refuse an
  // answer naming 東京); requests up to 16 MiB.
  return "CREATE TABLE IF NOT EXISTS dibs_answers (digest CHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY, "
         "request MEDIUMTEXT NOT NULL, answer LONGTEXT NOT NULL, stored_at DATETIME(6) NOT NULL) "
         "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";
}
std::string find(const std::string& digest_quoted, std::chrono::milliseconds ttl) {
  return "SELECT answer, TIMESTAMPDIFF(MICROSECOND, stored_at, NOW(6)) DIV 1000 FROM dibs_answers WHERE digest = " +
         digest_quoted + " AND stored_at > NOW(6) - INTERVAL " + std::to_string(ttl.count()) + "000 MICROSECOND";
}
std::string keep(const std::vector<std::array<std::string, 3>>& rows_quoted) {
  std::string values;
  for (const auto& r : rows_quoted)
    values += (values.empty() ? "(" : ", (") + r[0] + ", " + r[1] + ", " + r[2] + ", NOW(6))";
  return "INSERT INTO dibs_answers (digest, request, answer, stored_at) VALUES " + values +
         " ON DUPLICATE KEY UPDATE request = VALUES(request), answer = VALUES(answer), stored_at = VALUES(stored_at)";
}
std::vector<std::vector<std::size_t>> keep_runs(const std::vector<std::array<std::string, 3>>& rows_quoted,
                                                std::size_t max_statement_bytes) {
  // The statement's own words (the INSERT, the ON DUPLICATE KEY UPDATE) and each row's (NOW(6),
  // the separators) take under 256 bytes; a quarter of the packet is left over for safety.
  const std::size_t room = max_statement_bytes - max_statement_bytes / 4;
  std::vector<std::vector<std::size_t>> runs;
  std::size_t bytes = 256;
  for (std::size_t i = 0; i < rows_quoted.size(); ++i) {
    const auto& r = rows_quoted[i];
    const std::size_t row = r[0].size() + r[1].size() + r[2].size() + 16;
    if (256 + row > room) continue;  // too large for any statement
    if (runs.empty() || bytes + row > room) {
      runs.emplace_back();
      bytes = 256;
    }
    runs.back().push_back(i);
    bytes += row;
  }
  return runs;
}
}  // namespace answers_sql

mysql_answers::mysql_answers(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {
  store_->execute(answers_sql::create_table());
}

std::optional<kept_answer> mysql_answers::find(const answer_key& k, std::chrono::milliseconds ttl) {
  std::optional<kept_answer> out;
  store_->in_session([&](mysql_session& c) {
    const auto rows = c.select(answers_sql::find(c.quote(k.digest), ttl));
    if (rows.empty() || rows[0].size() < 2 || !rows[0][0]) return;
    out = kept_answer{*rows[0][0], std::chrono::milliseconds(server_number<std::int64_t>(rows[0][1], "MySQL/MariaDB"))};
  });
  return out;
}

void mysql_answers::keep(const std::vector<std::pair<answer_key, std::string>>& answers) {
  if (answers.empty()) return;
  store_->in_session([&](mysql_session& c) {
    std::vector<std::array<std::string, 3>> rows;
    for (const auto& [k, answer] : answers) rows.push_back({c.quote(k.digest), c.quote(k.request), c.quote(answer)});
    // Someone's open transaction on the table holds a keep 2 s at most (on MySQL and MariaDB
    // alike), and the pooled session gets its server default back.
    c.execute("SET SESSION innodb_lock_wait_timeout = 2");
    struct restore {
      mysql_session& c;
      ~restore() {
        try {
          c.execute("SET SESSION innodb_lock_wait_timeout = DEFAULT");
        } catch (...) {  // a lost link: the session, and its setting, are gone anyway
        }
      }
    } back{c};
    // Each statement under the server's max_allowed_packet: a larger one would be refused (and
    // the link dropped) with every answer in it.
    for (const auto& run : answers_sql::keep_runs(rows, store_->max_statement_bytes())) {
      std::vector<std::array<std::string, 3>> some;
      for (const auto i : run) some.push_back(std::move(rows[i]));
      c.execute(answers_sql::keep(some));
    }
  });
}

std::shared_ptr<answer_store> mysql_store::open_answers() { return std::make_shared<mysql_answers>(shared_from_this()); }

}  // namespace dibs::mysql
