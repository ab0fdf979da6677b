// The claim protocol as SQL text for PostgreSQL 12+, and the meaning of what the server answers:
// plain functions, unit-tested without a server (tests/unit/test_pg_protocol.cpp). The connection
// (pg_connection.hpp) only moves bytes.
//
// Every operation is ONE statement (its own transaction), so nothing is held between round trips:
//   claim     UPDATE t SET lease WHERE id IN (SELECT id ... <claimable> ORDER BY ... LIMIT B
//             FOR UPDATE SKIP LOCKED) RETURNING id, source, attempts, until
//   complete  UPDATE t SET target, lease cleared FROM unnest(ids, bys, tokens, answers)
//             WHERE id + by + token match AND lock_until >= now() RETURNING id
//             (DELETE ... USING unnest(...) with on_done delete)
//   renew, release, fail: the same shape, fenced by id + by + token.
// Values travel as parameters ($1, $2...), arrays as text array literals: nothing from a row or an
// answer is ever spliced into the SQL text. All times are the server's (now()).
//
// The row states are sql_table_names.hpp's.
#pragma once

#include <adapters/postgres/pg_row_key.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::pg {

using table_names = sql_common::table_names<row_key>;

// Throws std::invalid_argument unless every name is [A-Za-z0-9_]{1,50} (PostgreSQL keeps 63
// bytes of a name; the index is named after the table plus a suffix).
void check_names(const table_names& n);

// `postgresql://USER:PASS@HOST:PORT/DB?table=T&sslmode=...` (or postgres://): the URI libpq gets
// (without `table`, which libpq would refuse) and the table. Throws std::invalid_argument.
struct pg_target {
  std::string conninfo;  // a URI libpq parses itself (percent-decoding, its own parameters)
  std::string table;
  bool table_named = false;  // the URI says ?table= (else the default, jobs)
};
pg_target parse_pg_uri(const std::string& uri);

// A statement and its parameters (text format; nullopt is SQL NULL).
struct statement {
  std::string sql;
  std::vector<std::optional<std::string>> params;
};

// dibs's columns after the key and the source, with their definitions: CREATE TABLE's and ALTER
// TABLE's.
std::vector<sql_common::column_definition> dibs_columns(const table_names& n);
std::string create_table(const table_names& n);
// The claim index: only the open rows (target NULL, not failed), in claim order.
std::string create_index(const table_names& n);
// LISTEN/NOTIFY for follow: the channel a table's new rows are announced on ("dibs_" + the
// table), the LISTEN statement, and a trigger that announces every INSERT statement on the table
// (one NOTIFY per statement, not per row; created with the table, or by `dibs init`). A producer
// may also run NOTIFY on the channel itself.
std::string notify_channel(const table_names& n);
std::string listen(const table_names& n);
std::string create_notify_trigger(const table_names& n);
// The open rows a claim may take: pending, or leased with a lease that ran out `grace_us` ago.
std::string claimable_condition(const table_names& n, const std::string& grace_param);

// Claim up to `max` rows for `by` with `token`; returns the key as text (the items' ids), source,
// attempts (after this claim), until (microseconds since the epoch, by the server's clock). A row
// already claimed `max_attempts` times (when above 0) is failed by the same statement instead
// (claim_request::max_attempts), and not returned.
// ", t."col"::text, json_build_object('v', t."date_col")::text, ...": a cell for each column the
// claim reads by type (table_names::typed_columns: the other columns a request reads, and a JSON
// source), as adapters/sql/row_fields.hpp reads it; "" when there are none.
std::string more_cells(const table_names& n);
statement claim(const table_names& n, std::size_t max, const std::string& by, std::uint64_t token,
                std::int64_t lease_us, std::int64_t grace_us, int max_attempts = 0);

struct fenced_ref {
  std::string id;  // the key's text, as the claim read it
  std::string by;
  std::uint64_t token;
};

// Each returns the ids it wrote, as they were sent (RETURNING the parameter, not the column's own
// text, so they compare exactly): the others had lost their lease.
statement complete_rows(const table_names& n, const std::vector<fenced_ref>& refs, const std::vector<std::string>& answers);
statement delete_rows(const table_names& n, const std::vector<fenced_ref>& refs);
// Also returns the new until (microseconds since the epoch) of each row it renewed.
statement renew_rows(const table_names& n, const std::vector<fenced_ref>& refs, std::int64_t lease_us);
// delay <= 0: clear the lease; otherwise keep it until now + delay (no one retries it
// earlier), its holder's name kept and its token 0: no write of the holder's matches it any more
// (a token is never 0), and a claim takes it once due, without the grace that guards a holder
// still at work.
statement release_rows(const table_names& n, const std::vector<fenced_ref>& refs, const std::vector<std::int64_t>& delay_us,
                       const std::vector<std::string>& whys, const std::vector<std::int64_t>& not_attempted = {});
statement fail_rows(const table_names& n, const std::vector<fenced_ref>& refs, const std::vector<std::string>& reasons,
                    const std::vector<int>& http_statuses);
// One row of counts: done, failed, pending, leased_live, leased_expired.
std::string stats(const table_names& n);
// The pre-flight's reads (admin_store::sample_pending), no lock taken: the table's columns in
// order, and up to `limit` open rows: their id and source (`with_source` false: the id only, for a table
// without that column; `non_null_source`: only a row whose source is set).
statement table_columns(const table_names& n);
std::string sample_open_row(const table_names& n, bool with_source, bool non_null_source, std::size_t limit = 1);
// One done row (its target set) whose source is set: its id and source.
std::string sample_done_row(const table_names& n);
statement insert_sources(const table_names& n, const std::vector<std::string>& sources);

// A PostgreSQL array literal of texts ({"a","b\"c"}): every element quoted, so no text reads as NULL.
std::string text_array(const std::vector<std::string>& values);
template <class Int>
std::string int_array(const std::vector<Int>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "}";
}

// The ids of `refs` that are not in `written` (in request order): the writes that lost their lease.
std::vector<std::string> lost_ids(const std::vector<fenced_ref>& refs, const std::vector<std::string>& written);

// What a server error means for the call that met it (its SQLSTATE; libpq's own failures have none):
enum class error_class {
  // refused for what a row carries (class 22 data exception: too long, invalid JSON, a character
  // it can't hold; 23 a constraint: CHECK, NOT NULL, unique, foreign key; P0 a PL/pgSQL
  // trigger's RAISE; 54 a program limit: a row or value too big, JSON too deep): the same row
  // would be refused again (store_refused: the engine splits the batch)
  row_refused,
  rerun,      // a serialization failure or deadlock (class 40): the server rolled back; run it again
  link_lost,  // the connection is gone or unusable (no SQLSTATE, class 08, 57P01-57P03), or its server
              // takes no writes (25006: read-only, a standby): reconnect
  denied,     // the user lacks a right (42501): no retry helps (store_denied)
  other,      // anything else (a statement timeout, a trigger that breaks): an outage, retried later
};
error_class classify(std::string_view sqlstate);
inline bool refuses_content(std::string_view sqlstate) { return classify(sqlstate) == error_class::row_refused; }
inline bool connection_lost(std::string_view sqlstate) { return classify(sqlstate) == error_class::link_lost; }
inline bool retry_statement(std::string_view sqlstate) { return classify(sqlstate) == error_class::rerun; }

// The right a statement needs on its table, by its first word: UPDATE (a claim's WITH ... UPDATE
// too), DELETE, SELECT; "" for anything else.
std::string statement_right(std::string_view sql);

}  // namespace dibs::pg
