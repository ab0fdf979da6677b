#include "pg_protocol.hpp"
#include "adapters/sql/row_fields.hpp"
#include "adapters/postgres/pg_quote.hpp"

#include "engine/src/reason_text.hpp"
#include <dibs/setting_error.hpp>

#include <cctype>
#include <stdexcept>
#include <unordered_set>

namespace dibs::pg {

namespace {
// $n as bigint microseconds -> an interval.
std::string micros(const std::string& param) { return "(" + param + "::bigint * interval '1 microsecond')"; }

std::string key_col(const table_names& n) { return q(n.key.column); }

// Matches each row of the batch by key AND by AND token (the fence), `v` being the unnest rows:
// the id, sent as text, cast to the key's type.
std::string fence(const table_names& n) {
  return "t." + key_col(n) + " = v.d_id::" + n.key.type + " AND t.\"dibs_lock_by\" = v.d_by AND t.\"dibs_lock_token\" = v.d_token";
}

void add_refs(statement& s, const std::vector<fenced_ref>& refs) {
  std::vector<std::string> ids;
  std::vector<std::string> bys;
  std::vector<std::uint64_t> tokens;
  for (const auto& r : refs) {
    ids.push_back(r.id);
    bys.push_back(r.by);
    tokens.push_back(r.token);
  }
  s.params.emplace_back(text_array(ids));
  s.params.emplace_back(text_array(bys));
  s.params.emplace_back(int_array(tokens));
}

const char* const refs_unnest = "unnest($1::text[], $2::text[], $3::bigint[]";
const char* const epoch_us = "(extract(epoch from t.\"dibs_lock_until\") * 1000000)::bigint";
}  // namespace

// The columns dibs owns: source and target must name others.
void check_names(const table_names& n) {
  sql_common::check_plain_names(n, 50, {"id", "dibs_lock_by", "dibs_lock_token", "dibs_lock_until", "dibs_attempts",
                                        "dibs_error", "dibs_http_status", "dibs_failed_at"});
}

pg_target parse_pg_uri(const std::string& uri) {
  const std::string usage = "expected postgresql://USER:PASSWORD@HOST:PORT/DATABASE?table=TABLE";
  if (uri.rfind("postgresql://", 0) != 0 && uri.rfind("postgres://", 0) != 0) throw std::invalid_argument(usage);
  pg_target out;
  out.table = "jobs";
  const auto qmark = uri.find('?');
  out.conninfo = uri.substr(0, qmark);
  if (qmark == std::string::npos) return out;
  std::string kept;
  std::size_t at = qmark + 1;
  while (at <= uri.size()) {
    auto amp = uri.find('&', at);
    if (amp == std::string::npos) amp = uri.size();
    const std::string pair = uri.substr(at, amp - at);
    if (pair.rfind("table=", 0) == 0) {
      out.table = pair.substr(6);
      out.table_named = true;
    }
    else if (!pair.empty()) kept += (kept.empty() ? "?" : "&") + pair;
    at = amp + 1;
  }
  out.conninfo += kept;
  if (out.table.empty()) throw std::invalid_argument("empty table name in the PostgreSQL URI");
  return out;
}

std::vector<sql_common::column_definition> dibs_columns(const table_names& n) {
  return {
      {n.target, q(n.target) + " JSONB NULL"},
      {"dibs_lock_by", "\"dibs_lock_by\" VARCHAR(128) NULL"},
      {"dibs_lock_token", "\"dibs_lock_token\" BIGINT NULL"},
      {"dibs_lock_until", "\"dibs_lock_until\" TIMESTAMPTZ NULL"},
      {"dibs_attempts", "\"dibs_attempts\" INT NOT NULL DEFAULT 0"},
      {"dibs_error", "\"dibs_error\" TEXT NULL"},
      {"dibs_http_status", "\"dibs_http_status\" INT NULL"},
      {"dibs_failed_at", "\"dibs_failed_at\" TIMESTAMPTZ NULL"},
  };
}

std::string create_table(const table_names& n) {
  std::vector<std::string> lines{"\"id\" BIGSERIAL PRIMARY KEY", q(n.source) + " VARCHAR(255) NULL"};
  for (const auto& column : sql_common::mapped_column_definitions(n, [](const std::string& c) { return q(c); }))
    lines.push_back(column.second);
  for (const auto& column : dibs_columns(n)) lines.push_back(column.second);
  return sql_common::create_table_statement(q(n.table), lines);
}

std::string create_index(const table_names& n) {
  // Pending rows (lock_until NULL) first, then leases by expiry: a claim reads the head of the
  // index and stops at its LIMIT. Done and failed rows are not in it at all.
  return "CREATE INDEX IF NOT EXISTS " + q(n.table + "_dibs_open") + " ON " + q(n.table) +
         " (\"dibs_lock_until\" NULLS FIRST, " + key_col(n) + ") WHERE " + q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NULL";
}

std::string notify_channel(const table_names& n) { return "dibs_" + n.table; }

std::string listen(const table_names& n) { return "LISTEN " + q(notify_channel(n)); }

std::string create_notify_trigger(const table_names& n) {
  // Statement level and INSERT only: a claim or a completion (every statement dibs itself runs)
  // must not wake anyone, and a bulk insert announces itself once. Created only if missing, so a
  // worker starting never takes the table's exclusive lock that DROP/CREATE TRIGGER needs.
  // (Names are checked [A-Za-z0-9_], so they can stand in a literal.)
  const std::string fn = n.table + "_dibs_notify";
  return "CREATE OR REPLACE FUNCTION " + q(fn) + "() RETURNS trigger LANGUAGE plpgsql AS $dibs$ BEGIN PERFORM pg_notify('" +
         notify_channel(n) + "', ''); RETURN NULL; END $dibs$; " +
         "DO $dibs$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '" + fn + "' AND tgrelid = '" +
         q(n.table) + "'::regclass) THEN CREATE TRIGGER " + q(fn) + " AFTER INSERT ON " + q(n.table) +
         " FOR EACH STATEMENT EXECUTE FUNCTION " + q(fn) + "(); END IF; END $dibs$";
}

std::string claimable_condition(const table_names& n, const std::string& grace_param) {
  // A lease given back for a retry (token 0, release_rows) is due at its time, with no grace. The
  // first term is on the claim index's column alone (a live lease is passed over there).
  return q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NULL AND (\"dibs_lock_until\" IS NULL OR \"dibs_lock_until\" < now()) AND " +
         "(\"dibs_lock_until\" IS NULL OR \"dibs_lock_until\" < now() - " + micros(grace_param) + " OR \"dibs_lock_token\" = 0)";
}

std::string more_cells(const table_names& n) {
  const auto columns = n.typed_columns();
  const auto types = n.typed_column_types();
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    // The common types as the server writes them; the others (a timestamp as ISO 8601, an array
    // as JSON) wrapped in {"v": value} by json_build_object, which keeps their type.
    if (sql_common::cell_kind_of(types[i]) != sql_common::cell_kind::wrapped) out += ", t." + q(columns[i]) + "::text";
    else out += ", json_build_object('v', t." + q(columns[i]) + ")::text";
  }
  return out;
}

statement claim(const table_names& n, std::size_t max, const std::string& by, std::uint64_t token, std::int64_t lease_us,
                std::int64_t grace_us, int max_attempts) {
  // MATERIALIZED: the locking SELECT runs once, and the UPDATE writes exactly the rows it locked.
  // `id = ANY (ARRAY(...))`, not a join with `picked`: joined, the planner hashes the whole table
  // on every claim once the batch is above ~1% of its estimated rows (measured: a batch of 500 on
  // 50,000 rows drained at a tenth of the rate of a batch of 100); an array of ids keeps the
  // key lookups. The order is the claim index's first column only, so that any index led by
  // lock_until serves it (one made for an earlier key, too) and the scan stops at the LIMIT.
  // With max_attempts, the rows picked that were claimed that many times already are failed by a
  // data-modifying CTE of the same statement (it runs whether or not it is read), and only the
  // others are leased: the two UPDATEs touch disjoint rows, all locked by `picked`.
  statement s;
  const auto key = key_col(n);
  const bool limited = max_attempts > 0;
  const std::string picked = "WITH picked AS MATERIALIZED (SELECT " + key + (limited ? ", \"dibs_attempts\" AS d_attempts" : "") +
                             " FROM " + q(n.table) + " WHERE " + claimable_condition(n, "$4") +
                             " ORDER BY \"dibs_lock_until\" NULLS FIRST LIMIT $5::bigint FOR UPDATE SKIP LOCKED)";
  const auto picked_where = [&](const std::string& cond) {
    return "ANY (ARRAY(SELECT " + key + " FROM picked" + (limited ? " WHERE " + cond : "") + "))";
  };
  const std::string spent =
      limited ? ", spent AS (UPDATE " + q(n.table) + " AS f SET \"dibs_failed_at\" = now(), \"dibs_error\" = $7::text || f.\"dibs_attempts\" || "
                "$8::text, \"dibs_http_status\" = 0, \"dibs_lock_by\" = NULL, \"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL WHERE f." + key +
                " = " + picked_where("d_attempts >= $6::int") + ")"
              : "";
  s.sql = picked + spent + " UPDATE " + q(n.table) + " AS t SET \"dibs_lock_by\" = $1, \"dibs_lock_token\" = $2::bigint, \"dibs_lock_until\" = now() + " +
          micros("$3") + ", \"dibs_attempts\" = t.\"dibs_attempts\" + 1 WHERE t." + key + " = " + picked_where("d_attempts < $6::int") +
          " RETURNING t." + key + "::text, t." + q(n.source) + ", t.\"dibs_attempts\", " + epoch_us + more_cells(n);
  s.params = {by, std::to_string(token), std::to_string(lease_us), std::to_string(grace_us), std::to_string(max)};
  if (limited) s.params.insert(s.params.end(), {std::to_string(max_attempts), exhausted_attempts_head, exhausted_attempts_tail});
  return s;
}

statement complete_rows(const table_names& n, const std::vector<fenced_ref>& refs, const std::vector<std::string>& answers) {
  statement s;
  // The mapped columns from the answer's members, each converted to its column's type by
  // jsonb_populate_record (a value the column can't hold: the row is refused, and fails alone).
  std::string mapped;
  if (!n.mapped.empty()) {
    std::string cols, picks;
    for (const auto& col : n.mapped) {
      cols += (cols.empty() ? "" : ", ") + q(col);
      picks += (picks.empty() ? "r." : ", r.") + q(col);
    }
    mapped = ", (" + cols + ") = (SELECT " + picks + " FROM jsonb_populate_record(NULL::" + q(n.table) +
             ", v.d_answer::jsonb) AS r)";
  }
  s.sql = "UPDATE " + q(n.table) + " AS t SET " + q(n.target) + " = v.d_answer::jsonb" + mapped +
          ", \"dibs_lock_by\" = NULL, \"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL, \"dibs_error\" = NULL FROM " +
          refs_unnest + ", $4::text[]) AS v(d_id, d_by, d_token, d_answer) WHERE " + fence(n) +
          " AND t.\"dibs_lock_until\" >= now() RETURNING v.d_id";
  add_refs(s, refs);
  s.params.emplace_back(text_array(answers));
  return s;
}

statement delete_rows(const table_names& n, const std::vector<fenced_ref>& refs) {
  statement s;
  s.sql = "DELETE FROM " + q(n.table) + " AS t USING " + refs_unnest + ") AS v(d_id, d_by, d_token) WHERE " + fence(n) +
          " AND t.\"dibs_lock_until\" >= now() RETURNING v.d_id";
  add_refs(s, refs);
  return s;
}

statement renew_rows(const table_names& n, const std::vector<fenced_ref>& refs, std::int64_t lease_us) {
  statement s;
  s.sql = "UPDATE " + q(n.table) + " AS t SET \"dibs_lock_until\" = now() + " + micros("$4") + " FROM " + refs_unnest +
          ") AS v(d_id, d_by, d_token) WHERE " + fence(n) + " RETURNING v.d_id, " + epoch_us;
  add_refs(s, refs);
  s.params.emplace_back(std::to_string(lease_us));
  return s;
}

statement release_rows(const table_names& n, const std::vector<fenced_ref>& refs, const std::vector<std::int64_t>& delay_us,
                       const std::vector<std::string>& whys, const std::vector<std::int64_t>& not_attempted) {
  statement s;
  s.sql = "UPDATE " + q(n.table) +
          " AS t SET \"dibs_lock_by\" = CASE WHEN v.d_delay > 0 THEN t.\"dibs_lock_by\" END, "
          "\"dibs_lock_token\" = CASE WHEN v.d_delay > 0 THEN 0 END, "
          "\"dibs_lock_until\" = CASE WHEN v.d_delay > 0 THEN now() + " + micros("v.d_delay") + " END, "
          "\"dibs_attempts\" = GREATEST(t.\"dibs_attempts\" - v.d_back, 0), "
          "\"dibs_error\" = v.d_why FROM " + refs_unnest +
          ", $4::bigint[], $5::text[], $6::bigint[]) AS v(d_id, d_by, d_token, d_delay, d_why, d_back) WHERE " + fence(n) +
          " RETURNING v.d_id";
  add_refs(s, refs);
  s.params.emplace_back(int_array(delay_us));
  s.params.emplace_back(text_array(whys));
  std::vector<std::int64_t> back(refs.size(), 0);
  for (std::size_t i = 0; i < back.size() && i < not_attempted.size(); ++i) back[i] = not_attempted[i] ? 1 : 0;
  s.params.emplace_back(int_array(back));
  return s;
}

statement fail_rows(const table_names& n, const std::vector<fenced_ref>& refs, const std::vector<std::string>& reasons,
                    const std::vector<int>& http_statuses) {
  // The row counts its own attempts (claims increment them).
  statement s;
  s.sql = "UPDATE " + q(n.table) +
          " AS t SET \"dibs_failed_at\" = now(), \"dibs_error\" = v.d_reason, \"dibs_http_status\" = v.d_status, \"dibs_lock_by\" = NULL, "
          "\"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL FROM " + refs_unnest +
          ", $4::text[], $5::int[]) AS v(d_id, d_by, d_token, d_reason, d_status) WHERE " + fence(n) + " RETURNING v.d_id";
  add_refs(s, refs);
  s.params.emplace_back(text_array(reasons));
  s.params.emplace_back(int_array(http_statuses));
  return s;
}

std::string stats(const table_names& n) {
  const std::string open = q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NULL";
  return "SELECT count(*) FILTER (WHERE " + q(n.target) + " IS NOT NULL), "
         "count(*) FILTER (WHERE " + q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NOT NULL), "
         "count(*) FILTER (WHERE " + open + " AND \"dibs_lock_token\" IS NULL), "
         "count(*) FILTER (WHERE " + open + " AND \"dibs_lock_token\" IS NOT NULL AND \"dibs_lock_until\" >= now()), "
         "count(*) FILTER (WHERE " + open + " AND \"dibs_lock_token\" IS NOT NULL AND \"dibs_lock_until\" < now()) FROM " + q(n.table);
}

statement table_columns(const table_names& n) {
  return {"SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() "
          "AND table_name = $1 ORDER BY ordinal_position",
          {n.table}};
}

std::string sample_open_row(const table_names& n, bool with_source, bool non_null_source, std::size_t limit) {
  return "SELECT " + key_col(n) + "::text" + (with_source ? ", " + q(n.source) + "::text" + more_cells(n) : std::string()) + " FROM " +
         q(n.table) + " AS t WHERE " + q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NULL" +
         (with_source && non_null_source ? " AND " + q(n.source) + " IS NOT NULL" : std::string()) + " LIMIT " +
         std::to_string(limit);
}

std::string sample_done_row(const table_names& n) {
  return "SELECT " + key_col(n) + "::text, " + q(n.source) + "::text FROM " + q(n.table) + " WHERE " + q(n.target) +
         " IS NOT NULL AND " + q(n.source) + " IS NOT NULL LIMIT 1";
}

statement insert_sources(const table_names& n, const std::vector<std::string>& sources) {
  statement s;
  s.sql = "INSERT INTO " + q(n.table) + " (" + q(n.source) + ") SELECT unnest($1::text[])";
  s.params.emplace_back(text_array(sources));
  return s;
}

std::string text_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += i ? ",\"" : "\"";
    for (const char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::vector<std::string> lost_ids(const std::vector<fenced_ref>& refs, const std::vector<std::string>& written) {
  const std::unordered_set<std::string> landed(written.begin(), written.end());
  std::vector<std::string> out;
  for (const auto& r : refs)
    if (!landed.count(r.id)) out.push_back(r.id);
  return out;
}

error_class classify(std::string_view sqlstate) {
  // libpq's own failures (the socket closed, the server gone mid-answer) carry no SQLSTATE.
  if (sqlstate.size() != 5) return error_class::link_lost;
  const auto cls = sqlstate.substr(0, 2);
  if (cls == "22" || cls == "23" || cls == "54" || cls == "P0") return error_class::row_refused;
  if (cls == "40") return error_class::rerun;
  // 25006 (read-only transaction): a server that no longer takes writes -- a demoted primary, a
  // standby: a new connection finds the one that does (pg_failover.hpp).
  if (cls == "08" || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03" || sqlstate == "25006")
    return error_class::link_lost;
  if (sqlstate == "42501") return error_class::denied;
  return error_class::other;
}

std::string statement_right(std::string_view sql) {
  for (const char* word : {"UPDATE", "WITH", "DELETE", "SELECT"})
    if (sql.rfind(word, 0) == 0) return std::string(word) == "WITH" ? "UPDATE" : word;
  return "";
}

}  // namespace dibs::pg
