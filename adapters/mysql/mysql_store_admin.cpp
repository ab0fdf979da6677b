// mysql_store's dialect of the operator's questions (dibs/stores/sql_admin_store.hpp): each
// question's statement in MySQL/MariaDB's words, its values quoted by the connection, run on a
// pool connection; what the rows mean is the shared part's.
#include "mysql_store_impl.hpp"

#include "claimed_rows.hpp"
#include "mysql_retry.hpp"
#include "mysql_quote.hpp"
#include "mysql_workers.hpp"

#include <adapters/sql/sql_rows.hpp>

#include <type_traits>

namespace dibs::mysql {

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

std::vector<sql_common::admin_row> mysql_store::ask(const sql_common::admin_question& question) {
  return impl_->with_connection([&](mysql_connection& c) {
    const auto& n = impl_->names;
    const auto statement = std::visit(
        [&](const auto& a) -> std::string {
          using A = std::decay_t<decltype(a)>;
          namespace asked = sql_common::ask;
          if constexpr (std::is_same_v<A, asked::table_columns>) return table_columns(n);
          else if constexpr (std::is_same_v<A, asked::done_sample>) return sample_done_row(n);
          else if constexpr (std::is_same_v<A, asked::open_sample>) return sample_open_row(n, a.with_source, a.non_null_source, a.limit);
          else if constexpr (std::is_same_v<A, asked::failed_page>) return failed_rows_listed(n, selection_of(*a.which, n.key, c), a.limit, a.offset);
          else if constexpr (std::is_same_v<A, asked::failure_reasons>) return mysql::failure_reasons(n, a.top);
          else if constexpr (std::is_same_v<A, asked::lease_holders>) return mysql::lease_holders(n);
          else return "SELECT COUNT(*) FROM " + q(n.table) + " WHERE JSON_UNQUOTE(JSON_EXTRACT(" + q(n.target) + ", '$.status')) = 'fail'";
        },
        question);
    return c.select(statement);
  });
}

std::uint64_t mysql_store::change(const sql_common::admin_change& what) {
  return impl_->with_connection([&](mysql_connection& c) {
    const auto& n = impl_->names;
    if (const auto* r = std::get_if<sql_common::change::retry_failed>(&what))
      c.execute(retry_failed_rows(n, selection_of(*r->which, n.key, c)));
    else {
      const auto& name = std::get<sql_common::change::release_worker>(what).name;
      c.execute(mysql::release_worker(n, c.quote(name), c.quote(name + "-"), name.size() + 1));
    }
    return static_cast<std::uint64_t>(c.affected());
  });
}

sql_common::sql_admin_link::facts mysql_store::admin_facts() const { return {server, true, impl_->names.source}; }
pending_sample mysql_store::sampled(const sql_common::admin_row& row, bool has_source, std::vector<std::string> columns) const {
  return sampled_row(row, impl_->names.source, has_source, std::move(columns), sql_common::typed_read_of(impl_->names));
}

}  // namespace dibs::mysql
