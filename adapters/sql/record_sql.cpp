#include "record_sql.hpp"

#include "engine/src/server_number.hpp"

#include <cstdio>

namespace dibs::sql_common {

// The clock a decision reads is the server's when the statement runs (SYSDATE, clock_timestamp:
// not the time a statement or transaction started, which may be before a wait for a lock); a
// stamp written on MySQL/MariaDB is NOW(6), which a statement-based replica writes alike.
// MySQL/MariaDB sessions are in UTC (mysql_connection.cpp).
const record_dialect mysql_records{
    "MySQL/MariaDB",
    "VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL",
    "LONGTEXT",
    "DATETIME(6)",
    " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
    "CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)",
    "NOW(6)",
    "TIMESTAMPDIFF(MICROSECOND, %s, SYSDATE(6))",
    "%s < NOW(6) - INTERVAL $1 MICROSECOND",
    true};
const record_dialect pg_records{"PostgreSQL",
                                "text",
                                "text",
                                "timestamptz",
                                "",
                                "(extract(epoch from clock_timestamp()) * 1000000)::bigint",
                                "clock_timestamp()",
                                "(extract(epoch from clock_timestamp() - %s) * 1000000)::bigint",
                                "%s < clock_timestamp() - $1::bigint * interval '1 microsecond'",
                                false};

namespace {
std::string with_column(const char* format, const std::string& column) {
  std::string out = format;
  return out.replace(out.find("%s"), 2, column);
}
std::string age_of(const record_dialect& d, const std::string& column) { return with_column(d.age_us_of, column); }

// The key, the numbers, the texts and the stamp's age, each prefixed (a table's alias).
std::string columns(const record_kind& k, const record_dialect& d, const std::string& prefix) {
  std::string out = prefix + k.key;
  for (const auto& n : k.numbers) out += ", " + prefix + n;
  for (const auto& t : k.texts) out += ", " + prefix + t;
  out += ", " + (k.stamp.empty() ? std::string("NULL") : age_of(d, prefix + k.stamp));
  return out;
}

std::string placeholder(std::vector<record_param>& params, record_param p) {
  params.push_back(std::move(p));
  return "$" + std::to_string(params.size());
}

record_param number(std::int64_t n) { return {std::to_string(n), true}; }

// The number columns = their values, comma-separated; the stamp too.
std::string set_numbers(const record_kind& k, const record_dialect& d, const std::vector<std::int64_t>& next,
                        std::vector<record_param>& params) {
  std::string out;
  for (std::size_t i = 0; i < k.numbers.size(); ++i)
    out += (out.empty() ? "" : ", ") + k.numbers[i] + " = " + placeholder(params, number(i < next.size() ? next[i] : 0));
  if (!k.stamp.empty()) out += (out.empty() ? "" : ", ") + k.stamp + " = " + d.stamp_now;
  return out;
}
}  // namespace

namespace record_sql {
std::string create_table(const record_kind& k, const record_dialect& d) {
  std::string cols = k.key + " " + d.key_type + " PRIMARY KEY";
  for (const auto& n : k.numbers) cols += ", " + n + " BIGINT NOT NULL DEFAULT 0";
  for (const auto& t : k.texts) cols += ", " + t + " " + d.text_type;
  if (!k.stamp.empty()) cols += ", " + k.stamp + " " + d.stamp_type;
  return "CREATE TABLE IF NOT EXISTS " + k.table + " (" + cols + ")" + d.table_options;
}

record_statement read(const record_kind& k, const record_dialect& d, const std::string& key) {
  // A row whatever there is: the server's now comes back with no record too.
  record_statement s;
  s.sql = std::string("SELECT ") + d.now_us + ", " + columns(k, d, "t.") + " FROM (SELECT 1 AS one) AS o LEFT JOIN " +
          k.table + " AS t ON t." + k.key + " = ";
  s.sql += placeholder(s.params, {key});
  return s;
}

record_statement list(const record_kind& k, const record_dialect& d) {
  return {"SELECT " + columns(k, d, "") + " FROM " + k.table + " ORDER BY " + k.key, {}};
}

record_statement insert_new(const record_kind& k, const record_dialect& d, const std::string& key,
                            const std::vector<std::int64_t>& next) {
  record_statement s;
  std::string names = k.key, values = placeholder(s.params, {key});
  for (std::size_t i = 0; i < k.numbers.size(); ++i) {
    names += ", " + k.numbers[i];
    values += ", " + placeholder(s.params, number(i < next.size() ? next[i] : 0));
  }
  if (!k.stamp.empty()) {
    names += ", " + k.stamp;
    values += std::string(", ") + d.stamp_now;
  }
  // Not INSERT IGNORE: it would turn any refusal (a value too long) into a warning.
  s.sql = "INSERT INTO " + k.table + " (" + names + ") VALUES (" + values + ")" +
          (d.on_duplicate_key ? " ON DUPLICATE KEY UPDATE " + k.key + " = " + k.key : " ON CONFLICT DO NOTHING");
  return s;
}

record_statement update_seen(const record_kind& k, const record_dialect& d, const std::string& key,
                             const std::vector<std::int64_t>& seen, const std::vector<std::int64_t>& next) {
  record_statement s;
  s.sql = "UPDATE " + k.table + " SET " + set_numbers(k, d, next, s.params) + " WHERE " + k.key + " = ";
  s.sql += placeholder(s.params, {key});
  for (std::size_t i = 0; i < k.numbers.size(); ++i)
    s.sql += " AND " + k.numbers[i] + " = " + placeholder(s.params, number(i < seen.size() ? seen[i] : 0));
  return s;
}

record_statement put(const record_kind& k, const record_dialect& d, const std::vector<own_record>& records) {
  record_statement s;
  std::string names = k.key, values;
  for (const auto& n : k.numbers) names += ", " + n;
  for (const auto& t : k.texts) names += ", " + t;
  if (!k.stamp.empty()) names += ", " + k.stamp;
  for (const auto& r : records) {
    std::string row = placeholder(s.params, {r.key});
    for (std::size_t i = 0; i < k.numbers.size(); ++i)
      row += ", " + placeholder(s.params, number(i < r.numbers.size() ? r.numbers[i] : 0));
    for (std::size_t i = 0; i < k.texts.size(); ++i)
      row += ", " + placeholder(s.params, {i < r.texts.size() ? r.texts[i] : std::string()});
    if (!k.stamp.empty()) row += std::string(", ") + d.stamp_now;
    values += (values.empty() ? "(" : ", (") + row + ")";
  }
  std::string update;
  auto also = [&](const std::string& c) {
    update += (update.empty() ? "" : ", ") + c + " = " + (d.on_duplicate_key ? "VALUES(" + c + ")" : "EXCLUDED." + c);
  };
  for (const auto& n : k.numbers) also(n);
  for (const auto& t : k.texts) also(t);
  if (!k.stamp.empty()) also(k.stamp);
  if (update.empty()) update = k.key + " = " + (d.on_duplicate_key ? k.key : "EXCLUDED." + k.key);
  s.sql = "INSERT INTO " + k.table + " (" + names + ") VALUES " + values +
          (d.on_duplicate_key ? " ON DUPLICATE KEY UPDATE " : " ON CONFLICT (" + k.key + ") DO UPDATE SET ") + update;
  return s;
}

record_statement remove_older(const record_kind& k, const record_dialect& d, std::int64_t age_us, std::size_t most) {
  // A few rows a statement (each short: no long lock on MySQL, within PostgreSQL's statement
  // timeout), run again until one removes fewer.
  record_statement s;
  const auto older = with_column(d.stamp_before, k.stamp);
  const auto n = std::to_string(most);
  if (d.on_duplicate_key) s.sql = "DELETE FROM " + k.table + " WHERE " + older + " LIMIT " + n;
  else
    s.sql = "DELETE FROM " + k.table + " WHERE " + k.key + " IN (SELECT " + k.key + " FROM " + k.table + " WHERE " + older +
            " LIMIT " + n + ")";
  s.params.push_back(number(age_us));
  return s;
}

std::vector<std::vector<std::size_t>> put_runs(const std::vector<own_record>& records, std::size_t max_bytes) {
  // The statement's own words take under 512 bytes, each record's under 64 (its placeholders, a
  // stamp) besides its values written out quoted (twice their size at worst); a quarter of the
  // limit is left over.
  const std::size_t room = max_bytes - max_bytes / 4;
  std::vector<std::vector<std::size_t>> runs;
  std::size_t bytes = 512;
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::size_t row = 64 + 2 * records[i].key.size() + 24 * records[i].numbers.size();
    for (const auto& t : records[i].texts) row += 2 * t.size() + 8;
    if (512 + row > room) continue;  // too large for any statement
    if (runs.empty() || bytes + row > room || runs.back().size() >= 500) {
      runs.emplace_back();
      bytes = 512;
    }
    runs.back().push_back(i);
    bytes += row;
  }
  return runs;
}
}  // namespace record_sql

std::optional<own_record> record_of(const std::vector<std::optional<std::string>>& row, std::size_t first,
                                    const record_kind& k, const char* server) {
  if (row.size() < first + 2 + k.numbers.size() + k.texts.size())
    throw std::runtime_error(std::string(server) + ": a row of " + k.table + " came back short");
  if (!row[first]) return std::nullopt;
  own_record r;
  r.key = *row[first];
  std::size_t at = first + 1;
  for (std::size_t i = 0; i < k.numbers.size(); ++i) r.numbers.push_back(server_number<std::int64_t>(row[at++], server));
  for (std::size_t i = 0; i < k.texts.size(); ++i) r.texts.push_back(row[at++].value_or(""));
  r.age = std::chrono::microseconds(server_number<std::int64_t>(row[at], server));
  return r;
}

}  // namespace dibs::sql_common
