// pg_store's dialect of the operator's questions (dibs/stores/sql_admin_store.hpp): each
// question's statement in PostgreSQL's words, every value a parameter, run on the admin
// connection; what the rows mean is the shared part's.
#include "pg_store.hpp"
#include "pg_retry.hpp"
#include "pg_with_admin.hpp"
#include "pg_workers.hpp"

#include <adapters/sql/sql_rows.hpp>

#include <type_traits>

namespace dibs::pg {

namespace {
// The failed rows a `dibs retry` / `dibs failed` filter selects, in pg_retry's terms.
failed_rows selection_of(const retry_filter& which) {
  failed_rows rows;
  rows.reason = which.reason_contains;
  rows.reason_is = which.reason_is;
  const auto since = sql_common::since_of(which);
  rows.since_epoch_us = since.since_epoch_us;
  rows.since_ago_us = since.since_ago_us;
  rows.ids = which.ids;
  return rows;
}

// The done rows whose answer is the API's "no data": a target whose top-level "status" is "fail".
// Names are plain (check_names): quoted as they are.
statement no_data_rows(const table_names& n) {
  return {"SELECT count(*) FROM \"" + n.table + "\" WHERE (\"" + n.target + "\"::jsonb)->>'status' = 'fail'", {}};
}
}  // namespace

std::vector<sql_common::admin_row> pg_store::ask(const sql_common::admin_question& question) {
  const auto st = std::visit(
      [&](const auto& a) -> statement {
        using A = std::decay_t<decltype(a)>;
        namespace asked = sql_common::ask;
        if constexpr (std::is_same_v<A, asked::table_columns>) return table_columns(names_);
        else if constexpr (std::is_same_v<A, asked::done_sample>) return {sample_done_row(names_), {}};
        else if constexpr (std::is_same_v<A, asked::open_sample>) return {sample_open_row(names_, a.with_source, a.non_null_source, a.limit), {}};
        else if constexpr (std::is_same_v<A, asked::failed_page>) return failed_rows_listed(names_, selection_of(*a.which), a.limit, a.offset);
        else if constexpr (std::is_same_v<A, asked::failure_reasons>) return pg::failure_reasons(names_, a.top);
        else if constexpr (std::is_same_v<A, asked::lease_holders>) return pg::lease_holders(names_);
        else return no_data_rows(names_);
      },
      question);
  return with_admin([&](pg_connection& c) { return c.exec_blocking(st).rows; });
}

std::uint64_t pg_store::change(const sql_common::admin_change& what) {
  const auto st = std::holds_alternative<sql_common::change::retry_failed>(what)
                      ? retry_failed_rows(names_, selection_of(*std::get<sql_common::change::retry_failed>(what).which))
                      : pg::release_worker(names_, std::get<sql_common::change::release_worker>(what).name);
  return with_admin([&](pg_connection& c) { return static_cast<std::uint64_t>(c.exec_blocking(st).affected); });
}

sql_common::sql_admin_link::facts pg_store::admin_facts() const { return {"PostgreSQL", false, names_.source}; }

pending_sample pg_store::sampled(const sql_common::admin_row& row, bool has_source, std::vector<std::string> columns) const {
  return sql_common::sampled_row(row, names_.source, has_source, std::move(columns), sql_common::typed_read_of(names_));
}

}  // namespace dibs::pg
