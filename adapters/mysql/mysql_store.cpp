// mysql_store: its table prepared (created, checked, completed as the options allow), its rights
// probed, its counts, dibs seed's rows, and the calls the engine makes, handed to the pool.
#include <dibs/stores/mysql_store.hpp>

#include "mysql_store_impl.hpp"

#include "claimed_rows.hpp"
#include "mysql_settings.hpp"
#include "rights_probe.hpp"
#include "mysql_row_key.hpp"
#include "mysql_table_schema.hpp"

#include <adapters/sql/gap_verdict.hpp>
#include <adapters/sql/row_fields.hpp>
#include <adapters/sql/own_columns.hpp>
#include <adapters/sql/sql_rows.hpp>

#include "engine/src/init_hint.hpp"
#include <dibs/missing_table_error.hpp>
#include <dibs/setting_error.hpp>

namespace dibs::mysql {

// The table as the options allow: created when missing (create_table), else refused by name;
// the key its rows are addressed by chosen (row_key_pick.hpp), or the table refused when it has
// none dibs can use; what dibs lacks, keeps under an earlier dibs's names, or reads for another
// target changed (add_columns: dibs init), else refused with the statements (gap_verdict.hpp).
void mysql_store::impl::prepare_table() {
  const auto recorded = with_connection([&](mysql_connection& c) { return apply_settings_record(c, names, opts); });
  const auto* layout = recorded_value(recorded, sql_common::layout_setting);
  const bool recorded_layout = layout && *layout == sql_common::prefixed_layout;
  with_connection([&](mysql_connection& c) {
    auto columns = c.select(columns_query(names.table));
    bool created = false;
    if (columns.empty()) {
      if (!opts.create_table) {
        std::vector<std::string> tables;
        for (auto& r : c.select(tables_query())) tables.push_back(r[0].value_or(""));
        if (!uri.table_named) throw std::invalid_argument(sql_common::unnamed_table_refusal(uri.database, tables));
        throw missing_table_error("table", names.table, "database " + uri.database, std::move(tables),
                                  opts.add_columns ? "a table that is new: add " + setting_name("new_table")
                                                   : "dibs enrich and dibs status create no table; create it with: " + hint() +
                                                         " " + setting_name("new_table"));
      }
      // A mapped column that can't be made (no type), or may not be mapped, refuses the table
      // before it is created (its key will be dibs's id).
      sql_common::check_mapped_columns(names.mapped, "id", names.source, names.target);
      if (const auto refusal = sql_common::missing_mapped_refusal(names.table, names.mapped, names.mapped_types, {},
                                                                  sql_common::caseless_name);
          !refusal.empty())
        throw std::invalid_argument(refusal);
      c.execute(mysql::create_table(names));
      columns = c.select(columns_query(names.table));
      created = true;
    }
    const auto pick = pick_row_key(names.table, key_columns(columns), unique_keys(c.select(unique_keys_query(names.table))),
                                   true, make_id_unique(names));
    if (!pick.refusal.empty()) throw std::invalid_argument(pick.refusal);
    // No key yet: dibs init adds `id`, numbered, unique (the gap below names it).
    names.key = pick.add_id ? row_key{"id", key_kind::unsigned_integer, false} : key_of(pick, columns);
    sql_common::check_mapped_columns(names.mapped, names.key.column, names.source, names.target);
    std::vector<std::pair<std::string, std::string>> typed;  // (name, DATA_TYPE)
    for (auto& r : columns) typed.emplace_back(r[0].value_or(""), r.size() > 1 ? r[1].value_or("") : "");
    sql_common::settle_more_columns(names, typed, sql_common::caseless_name);
    sql_common::table_shape shape;
    for (auto& r : columns) {
      shape.columns.push_back(r[0].value_or(""));
      shape.kinds.push_back(r.size() > 3 ? column_kind(r[1].value_or(""), r[3].value_or("")) : "");
      if (r.size() > 4 && sql_common::caseless_name(shape.columns.back(), "dibs_open") && r[4]) shape.claim_reads = names_read(*r[4]);
    }
    for (auto& r : c.select(indexes_query(names.table))) shape.indexes.push_back(r[0].value_or(""));
    const auto unmapped = sql_common::missing_mapped_refusal(names.table, names.mapped, names.mapped_types, shape.columns,
                                                             sql_common::caseless_name);
    if (!unmapped.empty()) throw std::invalid_argument(unmapped);
    const auto needs = table_needs_of(names);
    const auto gap = sql_common::find_gap(names.source, needs, shape, recorded_layout);
    const sql_common::gap_context context{names.table,          names.source, opts.add_columns,
                                          opts.target_is_new || created,   shown_statements(names, gap),
                                          gap.taken.empty() ? "" : rename_example(names, gap.taken.front()), hint()};
    if (!sql_common::judge_gap(gap, needs, shape, context)) return 0;
    for (const auto& statement : table_statements(names, gap)) {
      log::info("mysql: changing table ", names.table, ": ", statement);
      c.execute(statement);
    }
    if (const auto note = sql_common::moves_note(names.table, gap, needs); !note.empty()) log::warn("mysql: ", note);
    return 0;
  });
  if (const auto note = sql_common::earlier_target_note(names.table, recorded, names.target, opts.settings.record); !note.empty())
    log::warn("mysql: ", note);
  log::debug("mysql: rows of ", names.table, " are addressed by their key ", names.key.column);
}

std::string mysql_store::impl::hint() const { return init_hint(shown, names.source, names.target); }
std::string mysql_store::impl::grant() const {
  return grant_statement(names, uri.database, current_user, opts.done == on_done::remove);
}

// Each probe of rights_probes in one transaction, rolled back: the first one the server
// refuses for want of a right names it.
void mysql_store::impl::check_write_rights() {
  with_connection([&](mysql_connection& c) {
    transaction tx(c);
    for (const auto& probe : rights_probes(names, opts.done == on_done::remove)) {
      try {
        c.execute(probe.sql);
      } catch (const sql_error& e) {
        if (classify(e.code) != error_class::denied) throw;
        throw std::invalid_argument(rights_refusal(probe.right, names.table, e.server_message, grant()));
      }
    }
    return 0;
  });
}

store_stats mysql_store::impl::stats() {
  return with_connection([&](mysql_connection& c) { return sql_common::stats_of(c.select(mysql::stats(names)), server); });
}

std::size_t mysql_store::impl::seed(std::size_t n, std::uint64_t seed_value, std::size_t distinct) {
  return sql_common::seed_addresses(n, seed_value, distinct, [&](const std::vector<std::string>& ips) {
    std::vector<std::string> quoted;
    for (const auto& ip : ips) quoted.push_back("'" + ip + "'");
    return with_connection([&](mysql_connection& c) {
      c.execute(insert_sources(names, quoted));
      return static_cast<std::size_t>(c.affected());
    });
  });
}

mysql_store::mysql_store(mysql_options opts)
    : sql_admin_store(opts.threads), impl_(std::make_unique<impl>(std::move(opts), *this)) {
  // Connects now, so a dead server is reported at start.
  impl_->limits = impl_->with_connection([&](mysql_connection& c) {
    auto rows = c.select("SELECT VERSION(), @@max_allowed_packet, CURRENT_USER()");
    if (rows.empty() || rows[0].size() < 3) return server_limits{};
    impl_->current_user = rows[0][2].value_or(impl_->current_user);
    return limits_for(rows[0][0].value_or(""), to_u64(rows[0][1]));
  });
  impl_->prepare_table();
  const auto& use = impl_->opts.settings;
  if (use.record) write_settings_record(*this, impl_->names.table, use.result->in_effect);  // dibs init
}

mysql_store::~mysql_store() { join_pool(); }  // no call may outlive the connections

void mysql_store::check_write_rights() { impl_->check_write_rights(); }
std::size_t mysql_store::max_statement_bytes() const { return impl_->limits.max_statement_bytes; }

std::string mysql_store::describe() const {
  return impl_->shown + " table " + impl_->names.table + " (claim skip-locked, on done " +
         (impl_->opts.done == on_done::remove ? "delete" : "mark") + ")";
}

std::size_t mysql_store::seed(std::size_t n, std::uint64_t s) { return impl_->seed(n, s, 0); }
std::size_t mysql_store::seed_skewed(std::size_t n, std::uint64_t s, std::size_t distinct) {
  return impl_->seed(n, s, distinct);
}
store_stats mysql_store::stats_blocking() { return impl_->stats(); }
std::vector<job> mysql_store::claim_blocking(const claim_request& r) { return impl_->claim(r); }
std::uint64_t mysql_store::claim_conflicts() const { return impl_->claim_conflicts.load(); }
write_result mysql_store::complete_blocking(const std::vector<completion>& b) { return impl_->complete(b); }
renew_result mysql_store::renew_blocking(const std::vector<renewal>& b, millis lease) { return impl_->renew(b, lease); }
write_result mysql_store::release_blocking(const std::vector<release_item>& b) { return impl_->release(b); }
write_result mysql_store::fail_blocking(const std::vector<failure>& b) { return impl_->fail(b); }

void mysql_store::reset_table() {
  impl_->with_connection([&](mysql_connection& c) {
    c.execute("DROP TABLE IF EXISTS `" + impl_->names.table + "`");
    c.execute(create_table(impl_->names));
    return 0;
  });
}

void mysql_store::in_session(const std::function<void(mysql_session&)>& body) {
  impl_->with_connection([&](mysql_connection& c) {
    body(c);
    return 0;
  });
}

void mysql_store::execute(const std::string& statement) {
  impl_->with_connection([&](mysql_connection& c) {
    c.execute(statement);
    return 0;
  });
}

std::optional<std::string> mysql_store::query_value(const std::string& select) {
  return impl_->with_connection([&](mysql_connection& c) -> std::optional<std::string> {
    auto rows = c.select(select);
    if (rows.empty() || rows[0].empty()) return std::nullopt;
    return rows[0][0];
  });
}

}  // namespace dibs::mysql
