// The statements of dibs's own records (own_records.hpp) for both SQL stores: one table a kind of
// record, its key the primary key. Pure functions of a kind and a dialect (what MySQL/MariaDB
// and PostgreSQL spell differently); tests read them. A statement's values are placeholders $1,
// $2, ... with the values beside it: a store's link binds them (PostgreSQL) or writes them in
// quoted (MySQL/MariaDB; a number as a number).
#pragma once

#include <dibs/stores/own_records.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::sql_common {

struct record_dialect {
  const char* server;         // in messages: "MySQL/MariaDB"
  const char* key_type;       // the key column's type
  const char* text_type;      // a text column's type (nullable: a record made by a swap has none)
  const char* stamp_type;     // the stamp's type
  const char* table_options;  // after CREATE TABLE's columns
  const char* now_us;         // the server's clock when the statement runs, in us since the epoch
  const char* stamp_now;      // the value a stamp is written with
  const char* age_us_of;      // the age of a stamp in us, "%s" standing for its column
  const char* stamp_before;   // a stamp older than $1 us, "%s" standing for its column
  bool on_duplicate_key;      // MySQL's ON DUPLICATE KEY UPDATE; else ON CONFLICT (key)
};

extern const record_dialect mysql_records;
extern const record_dialect pg_records;

struct record_param {
  std::string value;
  bool number = false;
};

struct record_statement {
  std::string sql;
  std::vector<record_param> params;
};

namespace record_sql {
std::string create_table(const record_kind& k, const record_dialect& d);
// One row: the server's now, then the key (NULL: no record), the numbers, the texts, the stamp's age.
record_statement read(const record_kind& k, const record_dialect& d, const std::string& key);
// The rows of every record, by key: the key, the numbers, the texts, the stamp's age.
record_statement list(const record_kind& k, const record_dialect& d);
// A new record with `next` (no other process made one): one row affected, or none.
record_statement insert_new(const record_kind& k, const record_dialect& d, const std::string& key,
                            const std::vector<std::int64_t>& next);
// `next` over `seen`: one row affected, or none (another process wrote first).
record_statement update_seen(const record_kind& k, const record_dialect& d, const std::string& key,
                             const std::vector<std::int64_t>& seen, const std::vector<std::int64_t>& next);
// Each record whole, replacing its key's.
record_statement put(const record_kind& k, const record_dialect& d, const std::vector<own_record>& records);
// Removes `most` records at most, stamped more than `age_us` ago.
record_statement remove_older(const record_kind& k, const record_dialect& d, std::int64_t age_us, std::size_t most);
// The put statements that carry `records` in order, each under `max_bytes` and 500 records
// (PostgreSQL binds 65,535 values at most): each a run of indexes. A record no statement could
// carry is in none.
std::vector<std::vector<std::size_t>> put_runs(const std::vector<own_record>& records, std::size_t max_bytes);
}  // namespace record_sql

// A row of read() or list() (from `first`, the key's cell) as a record; nullopt where the key is NULL.
std::optional<own_record> record_of(const std::vector<std::optional<std::string>>& row, std::size_t first,
                                    const record_kind& k, const char* server);

}  // namespace dibs::sql_common
