#include "pg_budget.hpp"

#include <adapters/sql/sql_rows.hpp>

#include <stdexcept>

namespace dibs::pg {

namespace budget_sql {
std::string create_table() {
  return "CREATE TABLE IF NOT EXISTS dibs_budget (budget_key text PRIMARY KEY, used bigint NOT NULL DEFAULT 0, "
         "budget_limit bigint NOT NULL DEFAULT 0, last_granted bigint NOT NULL DEFAULT 0)";
}
statement take(const std::string& key, std::uint64_t want, std::uint64_t limit) {
  // An UPDATE's SET reads the row as it was: last_granted and used both from the old used.
  return {"INSERT INTO dibs_budget AS b (budget_key, used, budget_limit, last_granted) "
          "VALUES ($1, LEAST($2::bigint, $3::bigint), $3::bigint, LEAST($2::bigint, $3::bigint)) "
          "ON CONFLICT (budget_key) DO UPDATE SET used = b.used + LEAST($2::bigint, GREATEST($3::bigint - b.used, 0)), "
          "last_granted = LEAST($2::bigint, GREATEST($3::bigint - b.used, 0)), budget_limit = $3::bigint "
          "RETURNING last_granted, used",
          {key, std::to_string(want), std::to_string(limit)}};
}
statement give_back(const std::string& key, std::uint64_t n) {
  return {"UPDATE dibs_budget SET used = GREATEST(used - $2::bigint, 0) WHERE budget_key = $1", {key, std::to_string(n)}};
}
statement records() { return {"SELECT budget_key, used, budget_limit FROM dibs_budget ORDER BY budget_key", {}}; }
}  // namespace budget_sql

budget_take pg_budget::take(const std::string& key, std::uint64_t want, std::uint64_t limit) {
  if (!created_) {
    side_.create_table(budget_sql::create_table());
    created_ = true;
  }
  return side_.with([&](pg_connection& c) {
    const auto rows = c.exec_blocking(budget_sql::take(key, want, limit)).rows;
    if (rows.empty()) throw std::runtime_error("PostgreSQL: the budget's take returned no row");
    return budget_take{sql_common::count_cell(rows[0][0], "PostgreSQL"), sql_common::count_cell(rows[0][1], "PostgreSQL")};
  });
}

void pg_budget::give_back(const std::string& key, std::uint64_t n) {
  side_.with([&](pg_connection& c) { return c.exec_blocking(budget_sql::give_back(key, n)).affected; });
}

std::vector<budget_record> pg_budget::records() {
  return side_.with([&](pg_connection& c) {
    std::vector<budget_record> out;
    for (const auto& r : c.exec_blocking(budget_sql::records()).rows)
      out.push_back({r[0].value_or(""), sql_common::count_cell(r[1], "PostgreSQL"), sql_common::count_cell(r[2], "PostgreSQL")});
    return out;
  });
}

std::shared_ptr<budget_store> pg_store::open_budget() { return std::make_shared<pg_budget>(shared_from_this()); }

}  // namespace dibs::pg
