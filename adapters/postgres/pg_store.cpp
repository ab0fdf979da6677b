#include "pg_store.hpp"
#include "pg_with_admin.hpp"
#include "pg_failover.hpp"
#include "pg_retry.hpp"
#include "pg_workers.hpp"

#include "pg_rights_probe.hpp"
#include "pg_table_schema.hpp"
#include "pg_tls.hpp"
#include "shard_link.hpp"

#include <adapters/sql/row_fields.hpp>
#include <adapters/sql/gap_verdict.hpp>
#include <adapters/sql/own_columns.hpp>
#include <adapters/sql/sql_rows.hpp>

#include "engine/src/init_hint.hpp"
#include <dibs/log.hpp>
#include <dibs/missing_table_error.hpp>
#include <dibs/setting_error.hpp>
#include "engine/src/rights_refusal.hpp"
#include "engine/src/server_number.hpp"
#include "engine/src/uri_redact.hpp"
#include "engine/src/worker_id.hpp"

#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <stdexcept>

namespace dibs::pg {

namespace {
std::atomic<std::uint64_t> g_serial{0};

std::uint64_t fresh_token() {
  thread_local std::mt19937_64 r{std::random_device{}()};
  std::uint64_t t;
  do t = r() >> 1; while (t == 0);  // 63 bits: a positive BIGINT
  return t;
}

std::int64_t micros(millis d) { return static_cast<std::int64_t>(d.count()) * 1000; }

store_time from_epoch_us(const std::optional<std::string>& s) {
  if (!s) return {};
  return store_time(std::chrono::duration_cast<store_clock::duration>(
      std::chrono::microseconds(server_number<std::int64_t>(s, "PostgreSQL"))));
}

// The server's name in the errors of a cell that is no number.
constexpr const char* server = "PostgreSQL";

std::int64_t to_i64(const std::optional<std::string>& s) { return server_number<std::int64_t>(s, server); }

// The fenced refs of a batch; ids that can't be this table's keys are lost leases at once.
template <class Item>
std::vector<fenced_ref> refs_of(const row_key& key, const std::vector<Item>& batch, std::vector<const Item*>& kept,
                                std::vector<std::string>& lost) {
  std::vector<fenced_ref> out;
  for (const auto& x : batch) {
    if (key_accepts(key, x.ref.id)) {
      out.push_back(fenced_ref{x.ref.id, x.ref.by, x.ref.token});
      kept.push_back(&x);
    } else {
      lost.push_back(x.ref.id);
    }
  }
  return out;
}

std::vector<std::string> written_ids(const pg_result& r) {
  std::vector<std::string> out;
  for (const auto& row : r.rows) out.push_back(row.at(0).value_or(""));
  return out;
}

template <class Result>
void tally(Result& res, const std::vector<fenced_ref>& refs, const pg_result& r) {
  const auto written = written_ids(r);
  res.applied += written.size();
  for (auto& id : lost_ids(refs, written)) res.lost.push_back(std::move(id));
}
}  // namespace

pg_store::pg_store(pg_options opts) : opts_(std::move(opts)), serial_(++g_serial) {
  const auto target = parse_pg_uri(opts_.uri);
  names_.table = target.table;
  table_named_ = target.table_named;
  names_.source = opts_.source;
  names_.target = opts_.target;
  names_.mapped = opts_.mapped_columns;
  names_.more = opts_.more_columns;
  check_names(names_);
  // Several hosts (a primary and its standbys): the one that takes writes (pg_failover.hpp).
  link_.conninfo = with_tls_default(with_read_write_target(target.conninfo), current_tls_environment());
  link_.connect_timeout = opts_.connect_timeout;
  link_.io_timeout = opts_.io_timeout;
  shown_ = redact_uri(opts_.uri);
  const auto recorded = apply_settings_record();  // dibs init's record, before the table is checked (pg_settings.cpp)
  // Connects now, so a dead server or a missing table is reported at start.
  prepare_table(recorded);
}

pg_store::~pg_store() = default;

std::string pg_store::describe() const {
  return shown_ + " table " + names_.table + " (claim skip-locked, on done " +
         (opts_.done == on_done::remove ? "delete" : "mark") + ")";
}

void pg_store::create_schema() {
  // CREATE INDEX ... IF NOT EXISTS takes a SHARE lock on the table even when the index is there:
  // it would wait for every open transaction that wrote to the table (a producer's), and every
  // worker's claims and writes would queue behind it. A table and index already there are left
  // alone (to_regclass takes no lock).
  // (The follow trigger too: a table dibs init prepared may lack it; pg_trigger takes no lock.)
  const statement present{"SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND EXISTS (SELECT 1 "
                          "FROM pg_trigger WHERE tgname = $3 AND tgrelid = to_regclass($1))",
                          {"\"" + names_.table + "\"", "\"" + names_.table + "_dibs_open\"", names_.table + "_dibs_notify"}};
  const auto found = with_admin([&](pg_connection& c) { return c.exec_blocking(present).rows; });
  if (!found.empty() && !found[0].empty() && found[0][0] == "t") return;
  // Two workers starting at once would race in CREATE TABLE IF NOT EXISTS (a unique violation in
  // the catalog): a transaction-scoped advisory lock on the table's name makes them take turns.
  const std::string script = "BEGIN; SELECT pg_advisory_xact_lock(hashtext('dibs table " + names_.table + "')); " +
                             pg::create_table(names_) + "; " + create_index(names_) + "; " + create_notify_trigger(names_) +
                             "; COMMIT";
  with_admin([&](pg_connection& c) {
    c.exec_script_blocking(script);
    return 0;
  });
}

bool pg_store::watch(std::function<void()> on_change) {
  if (!listener_) listener_ = std::make_unique<pg_listener>(link_, names_, shown_);
  return listener_->start(std::move(on_change));
}

void pg_store::stop_watching() {
  if (listener_) listener_->stop();
}

void pg_store::prepare_table(const settings_record& recorded) {
  const auto* layout = recorded_value(recorded, sql_common::layout_setting);
  const bool recorded_layout = layout && *layout == sql_common::prefixed_layout;
  with_admin([&](pg_connection& c) {
    auto rows_of = [&](const std::string& sql, std::vector<std::optional<std::string>> params) {
      return c.exec_blocking(statement{sql, std::move(params)}).rows;
    };
    auto names_of = [&](const std::string& sql, std::vector<std::optional<std::string>> params) {
      std::vector<std::string> out;
      for (auto& r : rows_of(sql, std::move(params))) out.push_back(r[0].value_or(""));
      return out;
    };
    const std::string hint = init_hint(shown_, names_.source, names_.target);
    const auto columns = rows_of(columns_query(), {names_.table});
    const auto unmapped = [&](const std::vector<std::string>& have) {
      const auto refusal = sql_common::missing_mapped_refusal(names_.table, names_.mapped, names_.mapped_types, have,
                                                              sql_common::exact_name);
      if (!refusal.empty()) throw std::invalid_argument(refusal);
    };
    if (columns.empty()) {
      if (opts_.create_table) {  // created below, under the advisory lock, keyed by its own id
        sql_common::check_mapped_columns(names_.mapped, "id", names_.source, names_.target);
        unmapped({});
        return 0;
      }
      const auto db = names_of("SELECT current_database()::text", {});
      if (!table_named_)
        throw std::invalid_argument(sql_common::unnamed_table_refusal(db.empty() ? "?" : db[0], names_of(tables_query(), {})));
      throw missing_table_error("table", names_.table, "database " + (db.empty() ? std::string("?") : db[0]),
                                names_of(tables_query(), {}),
                                opts_.add_columns ? "a table that is new: add " + setting_name("new_table")
                                                  : "dibs enrich and dibs status create no table; create it with: " + hint +
                                                        " " + setting_name("new_table"));
    }
    const auto pick = pick_row_key(names_.table, key_columns(columns), unique_keys(rows_of(unique_keys_query(), {names_.table})),
                                   false, make_id_unique(names_));
    if (!pick.refusal.empty()) throw std::invalid_argument(pick.refusal);
    // No key yet: dibs init adds `id`, numbered, unique (the gap below names it).
    names_.key = pick.add_id ? row_key{} : key_of(pick, columns);
    sql_common::check_mapped_columns(names_.mapped, names_.key.column.empty() ? "id" : names_.key.column, names_.source,
                                   names_.target);
    std::vector<std::pair<std::string, std::string>> typed;  // (name, type name)
    for (const auto& r : columns) typed.emplace_back(r[0].value_or(""), r.size() > 2 ? r[2].value_or("") : "");
    sql_common::settle_more_columns(names_, typed, sql_common::exact_name);
    sql_common::table_shape shape;
    for (const auto& r : columns) {
      shape.columns.push_back(r[0].value_or(""));
      shape.kinds.push_back(r.size() > 4 ? column_kind(r[2].value_or(""), r[4].value_or("")) : "");
    }
    for (const auto& r : rows_of(indexes_query(), {names_.table})) {
      shape.indexes.push_back(r[0].value_or(""));
      if (shape.indexes.back() == names_.table + "_dibs_open" && r.size() > 1 && r[1]) shape.claim_reads = predicate_names(*r[1]);
    }
    unmapped(shape.columns);
    const auto needs = table_needs_of(names_);
    const auto gap = sql_common::find_gap(names_.source, needs, shape, recorded_layout);
    const auto statements = alter_table(names_, gap);
    const sql_common::gap_context context{names_.table, names_.source, opts_.add_columns, opts_.target_is_new, statements,
                                          gap.taken.empty() ? "" : rename_example(names_, gap.taken.front()), hint};
    if (!sql_common::judge_gap(gap, needs, shape, context)) return 0;
    log::info("postgres: changing table ", names_.table, ": ", statements);
    c.exec_script_blocking("BEGIN; " + statements + " COMMIT");
    if (const auto note = sql_common::moves_note(names_.table, gap, needs); !note.empty()) log::warn("postgres: ", note);
    return 0;
  });
  if (const auto note = sql_common::earlier_target_note(names_.table, recorded, names_.target, opts_.settings.record);
      !note.empty())
    log::warn("postgres: ", note);
  if (opts_.create_table) create_schema();  // IF NOT EXISTS: a no-op for a table that is complete
  const auto role = with_admin([](pg_connection& c) { return c.exec_blocking({"SELECT current_user::text", {}}).rows; });
  if (!role.empty() && !role[0].empty() && role[0][0]) role_ = *role[0][0];
  log::debug("postgres: rows of ", names_.table, " are addressed by their key ", names_.key.column, " (", names_.key.type, ")");
}

std::string pg_store::grant() const { return grant_statement(names_, role_, opts_.done == on_done::remove); }

void pg_store::check_write_rights() {
  // Each probe of rights_probes in one transaction, rolled back: the first one the server refuses
  // for want of a right names it.
  with_admin([&](pg_connection& c) {
    c.exec_script_blocking("BEGIN");
    std::optional<pg_error> refused;
    std::string right;
    for (const auto& probe : rights_probes(names_, opts_.done == on_done::remove)) {
      try {
        c.exec_blocking({probe.sql, {}});
      } catch (const pg_error& e) {
        refused = e;
        right = probe.right;
        break;
      }
    }
    c.exec_script_blocking("ROLLBACK");
    if (!refused) return 0;
    if (classify(refused->sqlstate) != error_class::denied) throw *refused;
    throw std::invalid_argument(rights_refusal(right, names_.table, refused->server_message, grant()));
  });
}

awaitable<pg_result> pg_store::run(statement st) {
  const auto ex = co_await net::this_coro::executor;
  auto link = link_for(ex, serial_);
  int lost_connections = 0;
  for (int attempt = 0;; ++attempt) {
    if (!link->conn || !link->conn->usable()) {
      // One coroutine connects; the others wait for its connection.
      co_await take_turn(link);
      struct turn {
        shard_link& l;
        ~turn() { end_turn(l); }
      } held{*link};
      if (!link->conn || !link->conn->usable()) {
        link->conn.reset();
        // A shard's connection: the server cancels a statement stuck past half the I/O timeout.
        auto settings = link_;
        settings.statement_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(link_.io_timeout) / 2;
        link->conn = co_await pg_connection::connect(std::move(settings));
      }
    }
    auto conn = link->conn;
    std::optional<pg_error> failed;
    try {
      statements_.fetch_add(1, std::memory_order_relaxed);
      co_return co_await conn->exec_pipelined(st);
    } catch (const pg_error& e) {
      failed = e;
    }
    // (No co_await inside a catch block: the decision is made here.)
    const auto kind = classify(failed->sqlstate);
    if (kind == error_class::rerun && attempt < 5) continue;
    if (kind == error_class::row_refused)
      // Refused for a value it carries (the statement rolled back, the link is fine): the same
      // batch would be refused again. The engine splits it.
      throw store_refused(failed->what());
    if (kind == error_class::denied)
      throw store_denied(rights_refusal(statement_right(st.sql), names_.table, failed->server_message, grant()));
    if (kind != error_class::link_lost || lost_connections++ > 0) throw *failed;
    log::warn("postgresql: connection lost (", failed->what(), "); reconnecting");
    if (link->conn == conn) link->conn.reset();
  }
}

awaitable<std::vector<job>> pg_store::claim(claim_request req) {
  const auto token = fresh_token();
  auto st = pg::claim(names_, req.max, req.by, token, micros(req.lease), micros(req.grace), req.max_attempts);
  auto r = co_await run(std::move(st));
  const auto read = sql_common::typed_read_of(names_);
  std::vector<job> out;
  for (auto& row : r.rows) {
    job j;
    j.id = std::move(row.at(0)).value_or("");
    j.by = req.by;
    j.token = token;
    j.attempts = static_cast<int>(to_i64(row.at(2)));
    j.until = from_epoch_us(row.at(3));
    job_field f;
    f.name = names_.source;
    if (row.at(1)) {
      f.st = job_field::state::string;
      f.value = std::move(*row.at(1));
    }
    j.fields.push_back(std::move(f));
    out.push_back(sql_common::with_typed_cells(std::move(j), row, 4, read));
  }
  co_return out;
}

template <class Result, class Item, class Build, class Read>
awaitable<Result> pg_store::fenced_write(std::vector<Item> batch, Build build, Read read) {
  Result res;
  std::vector<const Item*> kept;
  auto refs = refs_of(names_.key, batch, kept, res.lost);
  if (refs.empty()) co_return res;
  std::optional<statement> st = build(refs, kept, res);
  if (!st) co_return res;
  const auto r = co_await run(std::move(*st));
  read(res, refs, r);
  tally(res, refs, r);
  co_return res;
}

namespace {
// What a write's answer says beyond the ids it wrote: nothing, but for a renewal.
const auto ids_only = [](auto&, const std::vector<fenced_ref>&, const pg_result&) {};

// PostgreSQL text can't hold a NUL byte (libpq would cut the parameter there and the server refuse
// the array): a reason quoting an API's answer may carry one, and a refused failure record would
// leave its row to be claimed, failed and refused again for ever. Shown as \0 instead.
std::string storable_reason(const std::string& why) {
  if (why.find('\0') == std::string::npos) return why;
  std::string out;
  for (char c : why) {
    if (c == '\0') out += "\\0";
    else out += c;
  }
  return out;
}
}  // namespace

awaitable<write_result> pg_store::complete(std::vector<completion> batch) {
  const bool remove = opts_.done == on_done::remove;
  auto build = [this, remove](std::vector<fenced_ref>& refs, const std::vector<const completion*>& kept,
                              write_result& res) -> std::optional<statement> {
    if (remove) return delete_rows(names_, refs);
    // A NUL byte can't travel in a text parameter (and jsonb refuses \u0000 itself): refused here.
    std::vector<fenced_ref> sendable;
    std::vector<std::string> answers;
    for (std::size_t i = 0; i < refs.size(); ++i) {
      if (kept[i]->result_json.find('\0') != std::string::npos) {
        res.refused.emplace_back(kept[i]->ref.id, "the answer holds a NUL byte, which PostgreSQL text can't hold");
        continue;
      }
      sendable.push_back(refs[i]);
      answers.push_back(kept[i]->result_json);
    }
    refs = std::move(sendable);
    if (refs.empty()) return std::nullopt;
    return complete_rows(names_, refs, answers);
  };
  auto write = fenced_write<write_result>(std::move(batch), build, ids_only);
  co_return co_await std::move(write);
}

awaitable<renew_result> pg_store::renew(std::vector<renewal> batch, millis lease) {
  auto build = [this, lease](std::vector<fenced_ref>& refs, const std::vector<const renewal*>&,
                             renew_result&) -> std::optional<statement> { return renew_rows(names_, refs, micros(lease)); };
  auto read = [](renew_result& res, const std::vector<fenced_ref>& refs, const pg_result& r) {
    std::map<std::string, store_time> until;
    for (const auto& row : r.rows) until[row.at(0).value_or("")] = from_epoch_us(row.at(1));
    for (const auto& ref : refs)
      if (auto it = until.find(ref.id); it != until.end()) res.until.push_back(it->second);
  };
  auto write = fenced_write<renew_result>(std::move(batch), build, read);
  co_return co_await std::move(write);
}

awaitable<write_result> pg_store::release(std::vector<release_item> batch) {
  auto build = [this](std::vector<fenced_ref>& refs, const std::vector<const release_item*>& kept,
                      write_result&) -> std::optional<statement> {
    std::vector<std::int64_t> delays, not_attempted;
    std::vector<std::string> whys;
    for (const auto* x : kept) {
      delays.push_back(micros(x->delay));
      whys.push_back(storable_reason(x->why));
      not_attempted.push_back(x->not_attempted ? 1 : 0);
    }
    return release_rows(names_, refs, delays, whys, not_attempted);
  };
  auto write = fenced_write<write_result>(std::move(batch), build, ids_only);
  co_return co_await std::move(write);
}

awaitable<write_result> pg_store::fail(std::vector<failure> batch) {
  auto build = [this](std::vector<fenced_ref>& refs, const std::vector<const failure*>& kept,
                      write_result&) -> std::optional<statement> {
    std::vector<std::string> reasons;
    std::vector<int> statuses;
    for (const auto* x : kept) {
      reasons.push_back(storable_reason(x->reason));
      statuses.push_back(x->http_status);
    }
    return fail_rows(names_, refs, reasons, statuses);
  };
  auto write = fenced_write<write_result>(std::move(batch), build, ids_only);
  co_return co_await std::move(write);
}

namespace {
store_stats stats_of(const pg_result& r) { return sql_common::stats_of(r.rows, server); }
}  // namespace

awaitable<store_stats> pg_store::stats() {
  statement st{pg::stats(names_), {}};
  co_return stats_of(co_await run(std::move(st)));
}

store_stats pg_store::stats_blocking() {
  const statement st{pg::stats(names_), {}};
  return with_admin([&](pg_connection& c) { return stats_of(c.exec_blocking(st)); });
}

std::size_t pg_store::seed(std::size_t n, std::uint64_t seed_value) { return seed_skewed(n, seed_value, 0); }

std::size_t pg_store::seed_skewed(std::size_t n, std::uint64_t seed_value, std::size_t distinct) {
  return sql_common::seed_addresses(n, seed_value, distinct, [&](const std::vector<std::string>& ips) {
    const auto st = insert_sources(names_, ips);
    return with_admin([&](pg_connection& c) { return static_cast<std::size_t>(c.exec_blocking(st).affected); });
  });
}

void pg_store::reset_table() {
  execute("DROP TABLE IF EXISTS \"" + names_.table + "\"");
  create_schema();
}

void pg_store::execute(const std::string& sql) {
  with_admin([&](pg_connection& c) {
    c.exec_script_blocking(sql);
    return 0;
  });
}

std::optional<std::string> pg_store::query_value(const std::string& select) {
  const statement st{select, {}};
  return with_admin([&](pg_connection& c) -> std::optional<std::string> {
    auto r = c.exec_blocking(st);
    if (r.rows.empty() || r.rows[0].empty()) return std::nullopt;
    return r.rows[0][0];
  });
}

}  // namespace dibs::pg
