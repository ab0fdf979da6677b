// The claim protocol as SQL text for MySQL 8 / MariaDB 10.6+: every statement the adapter sends
// is built here by a plain function, so unit tests can read them without a server. Values are
// escaped by the caller's `quote` (the connection's mysql_real_escape_string); identifiers are
// checked to be plain names and quoted with backticks. Rows are named by their key's literals
// (mysql_row_key.hpp: key_literal), whatever the key's column and type.
// The row states are sql_table_names.hpp's.
#pragma once

#include <adapters/mysql/mysql_row_key.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::mysql {

using table_names = sql_common::table_names<row_key>;

// Throws std::invalid_argument unless every name is [A-Za-z0-9_]{1,64} (sql_common::check_plain_names).
void check_names(const table_names& n);

struct row_ref {
  std::string key;  // the row's key literal
  std::uint64_t token;
};

// dibs's columns after the key and the source, in the order ALTER TABLE must add them (dibs_open
// reads the target and failed_at), with their definitions: CREATE TABLE's and ALTER TABLE's.
std::vector<sql_common::column_definition> dibs_columns(const table_names& n);
std::string create_table(const table_names& n);
// The claim index: open rows (target NULL and not failed) by their random pick key.
std::string claimable_condition(const table_names& n, std::int64_t grace_us);
// The claim, in its transaction: up to `limit` claimable rows from a random point `from` of the
// pick key (`at_or_above`: pick >= from, else pick < from: the wrap-around), each locked as the
// index scan reaches it; a row another transaction holds is skipped, never waited for, and never
// read beforehand (a separate candidate read goes stale while others claim). Also returns the
// row's source, its attempts after this claim, and the new `until` by the server's clock.
// FORCE INDEX: left to itself the optimizer may read the index from dibs_open = 1 on and lock
// every row below `from` before it filters them (measured: 860 of 2,000 rows locked to claim 20).
// The ORDER BY is the index's own order, so the scan stops at `limit` rows without a sort (a
// filesort would lock every candidate first).
// ", `col`, JSON_OBJECT('v', `date_col`), ...": a cell for each column the claim reads by type
// (table_names::typed_columns), as adapters/sql/row_fields.hpp reads it; "" when there are none.
std::string more_cells(const table_names& n);
std::string claim_rows(const table_names& n, std::int64_t grace_us, int from, bool at_or_above, std::size_t limit,
                       std::int64_t lease_us);
std::string set_lease(const table_names& n, const std::vector<std::string>& keys, const std::string& by_quoted,
                      std::uint64_t token, std::int64_t lease_us);
// In a write transaction: the rows of `refs` whose lease (by + token, and a live `until` when
// `live`) still holds, locked for the update that follows.
std::string held_rows(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted, bool live);
// The same as complete_rows for the rows of `refs` whose live lease `by` holds, the fence in its
// WHERE: when it changes as many rows as `refs` names (distinct), every lease held.
std::string complete_held_rows(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted,
                               const std::vector<std::string>& results_quoted);
// MariaDB only: deletes the rows of `refs` whose live lease `by` holds, and names them -- the fence
// and the write in one autocommitted statement (MySQL has no DELETE ... RETURNING).
std::string delete_held_rows(const table_names& n, const std::vector<row_ref>& refs, const std::string& by_quoted);
// Sets each row's target to its result and clears the lease (`results_quoted[i]` for `keys[i]`).
std::string complete_rows(const table_names& n, const std::vector<std::string>& keys,
                          const std::vector<std::string>& results_quoted);
std::string delete_rows(const table_names& n, const std::vector<std::string>& keys);
std::string renew_rows(const table_names& n, const std::vector<std::string>& keys, std::int64_t lease_us);
// delay 0: clear the lease; otherwise keep it until now + delay (no one retries it
// earlier), its holder's name kept and its token 0: no write of the holder's matches it any more
// (a token is never 0), and a claim takes it once due, without the grace that guards a holder
// still at work.
// `not_attempted`: the claim's attempt is given back (release_item::not_attempted).
std::string release_rows(const table_names& n, const std::vector<std::string>& keys, std::int64_t delay_us,
                         const std::string& why_quoted, bool not_attempted = false);
std::string fail_row(const table_names& n, const std::string& key, const std::string& reason_quoted, int http_status);
// One row of counts: done, failed, pending, leased_live, leased_expired.
std::string stats(const table_names& n);
std::string insert_sources(const table_names& n, const std::vector<std::string>& sources_quoted);
// The pre-flight's reads (admin_store::sample_pending), no lock taken: the table's columns in
// order, and up to `limit` open rows: their id and source (`with_source` false: the id only, for a table
// without that column; `non_null_source`: only a row whose source is set).
std::string table_columns(const table_names& n);
std::string sample_open_row(const table_names& n, bool with_source, bool non_null_source, std::size_t limit = 1);
// One done row (its target set) whose source is set: its id and source.
std::string sample_done_row(const table_names& n);

// Whether a session may run at READ COMMITTED: not on a server that writes its binary log as
// statements (log_bin on, binlog_format STATEMENT), which refuses every InnoDB write at that
// level. Such a session stays at the server's REPEATABLE READ: claims stay correct (they lock
// what they take), and wait more on gap locks.
bool read_committed_allowed(bool log_bin, std::string_view binlog_format);

}  // namespace dibs::mysql
