// pg_store's answers to the operator's questions (dibs status, retry, release) and the
// pre-flight's samples, on the admin connection.
#include "pg_store.hpp"
#include "pg_retry.hpp"
#include "pg_with_admin.hpp"
#include "pg_workers.hpp"

#include <adapters/sql/sql_rows.hpp>

#include <algorithm>

namespace dibs::pg {

std::optional<pending_sample> pg_store::sample_done() {
  return with_admin([&](pg_connection& c) -> std::optional<pending_sample> {
    const auto rows = c.exec_blocking({sample_done_row(names_), {}}).rows;
    if (rows.empty()) return std::nullopt;
    return sql_common::sampled_row(rows[0], names_.source, true, {});
  });
}

std::vector<pending_sample> pg_store::sample_pending_items(std::size_t limit) {
  return with_admin([&](pg_connection& c) {
    std::vector<std::string> columns;
    for (auto& r : c.exec_blocking(table_columns(names_)).rows) columns.push_back(r.at(0).value_or(""));
    // Quoted names are exact in PostgreSQL: the column is there as typed, or not at all.
    const bool has_source = std::find(columns.begin(), columns.end(), names_.source) != columns.end();
    auto rows = c.exec_blocking({sample_open_row(names_, has_source, true, limit), {}}).rows;
    if (rows.empty() && has_source) rows = c.exec_blocking({sample_open_row(names_, true, false, limit), {}}).rows;
    std::vector<pending_sample> out;
    for (const auto& row : rows)
      out.push_back(sql_common::sampled_row(row, names_.source, has_source, columns, sql_common::typed_read_of(names_)));
    return out;
  });
}

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
}  // namespace

std::uint64_t pg_store::retry_failed(const retry_filter& which) {
  const auto st = retry_failed_rows(names_, selection_of(which));
  return with_admin([&](pg_connection& c) { return static_cast<std::uint64_t>(c.exec_blocking(st).affected); });
}

void pg_store::list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) {
  const auto rows = selection_of(which);
  constexpr std::size_t page = 1000;
  for (std::size_t offset = 0;; offset += page) {
    const auto st = failed_rows_listed(names_, rows, page, offset);
    const auto got = with_admin([&](pg_connection& c) { return c.exec_blocking(st).rows; });
    for (const auto& r : got) each(sql_common::failed_item_of(r, "PostgreSQL"));
    if (got.size() < page) break;
  }
}

std::vector<failure_reason> pg_store::failure_reasons(std::size_t top) {
  const auto st = pg::failure_reasons(names_, top);
  return with_admin([&](pg_connection& c) {
    std::vector<failure_reason> out;
    for (const auto& r : c.exec_blocking(st).rows) out.push_back(sql_common::failure_reason_of(r, "PostgreSQL"));
    return out;
  });
}

std::vector<lease_holder> pg_store::lease_holders() {
  const auto st = pg::lease_holders(names_);
  return with_admin([&](pg_connection& c) {
    std::vector<lease_holder> out;
    for (const auto& r : c.exec_blocking(st).rows) out.push_back(sql_common::lease_holder_of(r, "PostgreSQL"));
    return out;
  });
}

std::uint64_t pg_store::release_worker(const std::string& name) {
  require_worker_id(name);
  const auto st = pg::release_worker(names_, name);
  return with_admin([&](pg_connection& c) { return static_cast<std::uint64_t>(c.exec_blocking(st).affected); });
}

}  // namespace dibs::pg
