// A table or collection of the user's own, made the same way on every store for the conformance
// cases (tests/conformance/own_names.cpp, init_twice.cpp): rows keyed by a text `pid`, an `ip`,
// and a JSON `geo_json` that holds a value or is null, plus columns (fields) of the user's that
// bear names dibs could want. And what those cases read back from it, whatever the store.
#pragma once

#include "support/backend.hpp"
#include "support/run_dibs.hpp"

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace dibs::test {

// A column of the user's besides: its name, its SQL type, and each row's value as an SQL literal
// and as JSON (one per row, in the rows' order; NULL / null where the row has none).
struct own_column {
  std::string name;
  std::string sql_type;
  std::vector<std::string> sql_values;
  std::vector<std::string> json_values;
};

struct own_row {
  std::string pid;
  std::string ip;
  std::optional<std::string> geo_json;  // a JSON object's text, or null
};

// `n` rows p1..pn with the addresses 8.8.i.1; every even one with geo_json {"kept": i}.
inline std::vector<own_row> half_answered(int n) {
  std::vector<own_row> rows;
  for (int i = 1; i <= n; ++i)
    rows.push_back({"p" + std::to_string(i), "8.8." + std::to_string(i) + ".1",
                    i % 2 == 0 ? std::optional<std::string>("{\"kept\": " + std::to_string(i) + "}") : std::nullopt});
  return rows;
}

namespace detail {
inline std::string json_string(const std::string& s) { return "\"" + s + "\""; }  // test data: no quotes inside
// The number a MongoDB reply's `field` holds ("n": 3, or {"$numberInt": "3"}).
inline std::size_t reply_number(const std::string& reply, const std::string& field) {
  std::smatch m;
  if (std::regex_search(reply, m, std::regex("\"" + field + "\"\\s*:\\s*\\{?\\s*(\"\\$number\\w+\"\\s*:\\s*)?\"?(\\d+)")))
    return std::stoul(m[2]);
  return 0;
}
// One store of the test database for these reads and writes, opened at the first.
inline backend_table& admin(const backend& db) {
  static auto t = db.open("own_place_admin");
  return t;
}
}  // namespace detail

// `dibs COMMAND` on the place `name` (its --store and, for MongoDB, --db and --collection put
// after the command), bounded: a run that never ends fails the test.
inline std::pair<int, std::string> dibs_at(const backend& db, const std::string& name, std::vector<std::string> args) {
  const auto where = db.where_for(name);
  args.insert(args.begin() + 1, where.begin(), where.end());
  return run_dibs_within(std::chrono::seconds(120), args);
}

// Makes `name` the user's own (dropping one of that name first).
inline void make_own_place(const backend& db, const std::string& name, const std::vector<own_row>& rows,
                           const std::vector<own_column>& extra = {}) {
  auto& t = detail::admin(db);
  if (db.sql) {
    t.execute("DROP TABLE IF EXISTS " + name);
    std::string columns = "pid VARCHAR(20) PRIMARY KEY, ip VARCHAR(45), geo_json " + db.sql_of().json_type + " NULL";
    for (const auto& c : extra) columns += ", " + c.name + " " + c.sql_type;
    t.execute("CREATE TABLE " + name + " (" + columns + ")");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::string names = "pid, ip, geo_json", values = "'" + rows[i].pid + "', '" + rows[i].ip + "', " +
                                                        (rows[i].geo_json ? "'" + *rows[i].geo_json + "'" : "NULL");
      for (const auto& c : extra) {
        names += ", " + c.name;
        values += ", " + c.sql_values.at(i);
      }
      t.execute("INSERT INTO " + name + " (" + names + ") VALUES (" + values + ")");
    }
    return;
  }
  t.command("{\"drop\": \"" + name + "\"}");
  std::string docs;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string d = "{\"_id\": " + detail::json_string(rows[i].pid) + ", \"ip\": " + detail::json_string(rows[i].ip) +
                    ", \"geo_json\": " + rows[i].geo_json.value_or("null");
    for (const auto& c : extra) d += ", \"" + c.name + "\": " + c.json_values.at(i);
    docs += (i ? ", " : "") + d + "}";
  }
  t.command("{\"insert\": \"" + name + "\", \"documents\": [" + docs + "]}");
}

// How many rows of `name` match: SQL `sql_where`, MongoDB `mongo_query` (a JSON filter).
inline std::size_t count_where(const backend& db, const std::string& name, const std::string& sql_where,
                               const std::string& mongo_query) {
  auto& t = detail::admin(db);
  if (db.sql) return std::stoul(t.query_value("SELECT COUNT(*) FROM " + name + " WHERE " + sql_where).value_or("0"));
  return detail::reply_number(t.command("{\"count\": \"" + name + "\", \"query\": " + mongo_query + "}"), "n");
}

// The rows whose geo_json still holds the value they had ({"kept": i}).
inline std::size_t count_kept(const backend& db, const std::string& name) {
  const std::string sql = db.sql ? db.sql_of().json_text("geo_json", "kept") + " IS NOT NULL" : "";
  return count_where(db, name, sql, "{\"geo_json.kept\": {\"$exists\": true}}");
}

}  // namespace dibs::test
