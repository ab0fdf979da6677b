// mysql_store's answers to the operator (admin_store): a pending row for the pre-flight, the
// failed rows retried, the commonest failure reasons, the "no data" answers, who holds leases,
// and a worker's leases released.
#include "mysql_store_impl.hpp"

#include "claimed_rows.hpp"
#include "mysql_retry.hpp"
#include "mysql_workers.hpp"

#include <adapters/sql/sql_rows.hpp>

#include "engine/src/worker_id.hpp"

#include <chrono>

namespace dibs::mysql {

std::optional<pending_sample> mysql_store::sample_done() {
  return impl_->with_connection([&](mysql_connection& c) -> std::optional<pending_sample> {
    const auto rows = c.select(sample_done_row(impl_->names));
    if (rows.empty()) return std::nullopt;
    return sampled_row(rows[0], impl_->names.source, true, {});
  });
}

std::vector<pending_sample> mysql_store::sample_pending_items(std::size_t limit) {
  return impl_->with_connection([&](mysql_connection& c) {
    const auto& n = impl_->names;
    std::vector<std::string> columns;
    for (auto& r : c.select(table_columns(n))) columns.push_back(r[0].value_or(""));
    const bool has_source = has_column(columns, n.source);
    auto rows = c.select(sample_open_row(n, has_source, true, limit));
    if (rows.empty() && has_source) rows = c.select(sample_open_row(n, true, false, limit));
    std::vector<pending_sample> out;
    for (const auto& row : rows) out.push_back(sampled_row(row, n.source, has_source, columns, sql_common::typed_read_of(n)));
    return out;
  });
}

namespace {
// `ids` as literals of the key's kind; nullopt for no ids (any row). An id the key can't hold names no row.
std::optional<std::vector<std::string>> key_literals_of(const row_key& key, const std::vector<std::string>& ids,
                                                        mysql_connection& c) {
  if (ids.empty()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& id : ids)
    if (auto lit = key_literal(key, id, [&c](const std::string& v) { return c.quote(v); })) out.push_back(std::move(*lit));
  return out;
}

// `which` as the statements' selection, its values quoted by the connection.
failed_rows selection_of(const retry_filter& which, const row_key& key, mysql_connection& c) {
  failed_rows rows;
  if (!which.reason_contains.empty()) rows.reason_quoted = c.quote(which.reason_contains);
  if (which.reason_is) rows.reason_is_quoted = c.quote(*which.reason_is);  // '' quoted is not empty
  const auto since = sql_common::since_of(which);
  rows.since_epoch_us = since.since_epoch_us;
  rows.since_ago_us = since.since_ago_us;
  rows.key_literals = key_literals_of(key, which.ids, c);
  return rows;
}
}  // namespace

void mysql_store::list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) {
  constexpr std::size_t page = 1000;
  for (std::size_t offset = 0;; offset += page) {
    const auto got = impl_->with_connection([&](mysql_connection& c) {
      return c.select(failed_rows_listed(impl_->names, selection_of(which, impl_->names.key, c), page, offset));
    });
    for (const auto& r : got) each(sql_common::failed_item_of(r, server));
    if (got.size() < page) break;
  }
}

std::uint64_t mysql_store::retry_failed(const retry_filter& which) {
  return impl_->with_connection([&](mysql_connection& c) {
    c.execute(retry_failed_rows(impl_->names, selection_of(which, impl_->names.key, c)));
    return static_cast<std::uint64_t>(c.affected());
  });
}

std::vector<failure_reason> mysql_store::failure_reasons(std::size_t top) {
  return impl_->with_connection([&](mysql_connection& c) {
    std::vector<failure_reason> out;
    for (const auto& r : c.select(mysql::failure_reasons(impl_->names, top))) out.push_back(sql_common::failure_reason_of(r, server));
    return out;
  });
}

// The done rows whose answer is the API's "no data" (admin_store::no_data_count). A target
// column that holds something else than JSON makes the server refuse the question: not counted.
std::optional<std::uint64_t> mysql_store::no_data_count() {
  const auto& n = impl_->names;
  try {
    return impl_->with_connection([&](mysql_connection& c) {
      const auto rows = c.select("SELECT COUNT(*) FROM `" + n.table + "` WHERE JSON_UNQUOTE(JSON_EXTRACT(`" + n.target +
                                 "`, '$.status')) = 'fail'");
      return rows.empty() ? std::uint64_t{0} : to_u64(rows[0][0]);
    });
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<lease_holder> mysql_store::lease_holders() {
  return impl_->with_connection([&](mysql_connection& c) {
    std::vector<lease_holder> out;
    for (const auto& r : c.select(mysql::lease_holders(impl_->names))) out.push_back(sql_common::lease_holder_of(r, server));
    return out;
  });
}

std::uint64_t mysql_store::release_worker(const std::string& name) {
  require_worker_id(name);
  return impl_->with_connection([&](mysql_connection& c) {
    c.execute(mysql::release_worker(impl_->names, c.quote(name), c.quote(name + "-"), name.size() + 1));
    return static_cast<std::uint64_t>(c.affected());
  });
}

}  // namespace dibs::mysql
