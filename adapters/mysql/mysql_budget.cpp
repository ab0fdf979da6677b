#include "mysql_budget.hpp"

#include "mysql_session.hpp"

#include <adapters/sql/sql_rows.hpp>

#include <stdexcept>

namespace dibs::mysql {

namespace budget_sql {
std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_budget (budget_key VARCHAR(255) NOT NULL PRIMARY KEY, "
         "used BIGINT NOT NULL DEFAULT 0, budget_limit BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB";
}
std::string ensure_row(const std::string& key_quoted) {
  return "INSERT IGNORE INTO dibs_budget (budget_key) VALUES (" + key_quoted + ")";
}
std::string take(const std::string& key_quoted, std::uint64_t want, std::uint64_t limit) {
  const auto w = std::to_string(want), l = std::to_string(limit);
  return "UPDATE dibs_budget SET used = used + (@dibs_granted := LEAST(" + w + ", GREATEST(" + l +
         " - used, 0))), budget_limit = " + l + " WHERE budget_key = " + key_quoted;
}
std::string taken(const std::string& key_quoted) {
  return "SELECT @dibs_granted, used FROM dibs_budget WHERE budget_key = " + key_quoted;
}
std::string give_back(const std::string& key_quoted, std::uint64_t n) {
  return "UPDATE dibs_budget SET used = GREATEST(used - " + std::to_string(n) + ", 0) WHERE budget_key = " + key_quoted;
}
std::string records() { return "SELECT budget_key, used, budget_limit FROM dibs_budget ORDER BY budget_key"; }
}  // namespace budget_sql

budget_take mysql_budget::take(const std::string& key, std::uint64_t want, std::uint64_t limit) {
  if (!created_) {
    store_->execute(budget_sql::create_table());
    created_ = true;
  }
  budget_take out;
  store_->in_session([&](mysql_session& c) {  // one session: the @variable is the session's
    const auto k = c.quote(key);
    c.execute(budget_sql::ensure_row(k));
    c.execute(budget_sql::take(k, want, limit));
    const auto rows = c.select(budget_sql::taken(k));
    if (rows.empty()) throw std::runtime_error("MySQL/MariaDB: the budget's row " + key + " is gone");
    out.granted = sql_common::count_cell(rows[0][0], "MySQL/MariaDB");
    out.used = sql_common::count_cell(rows[0][1], "MySQL/MariaDB");
  });
  return out;
}

void mysql_budget::give_back(const std::string& key, std::uint64_t n) {
  store_->in_session([&](mysql_session& c) { c.execute(budget_sql::give_back(c.quote(key), n)); });
}

std::vector<budget_record> mysql_budget::records() {
  std::vector<budget_record> out;
  store_->in_session([&](mysql_session& c) {
    for (const auto& r : c.select(budget_sql::records()))
      out.push_back({r[0].value_or(""), sql_common::count_cell(r[1], "MySQL/MariaDB"), sql_common::count_cell(r[2], "MySQL/MariaDB")});
  });
  return out;
}

std::shared_ptr<budget_store> mysql_store::open_budget() { return std::make_shared<mysql_budget>(shared_from_this()); }

}  // namespace dibs::mysql
