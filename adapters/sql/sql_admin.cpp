// The operator's questions for both SQL stores (dibs/stores/sql_admin_store.hpp): the dialect
// runs each statement; the paging, the checks and what a row means are here, once.
#include <dibs/stores/sql_admin_store.hpp>

#include <adapters/sql/sql_rows.hpp>

#include "engine/src/worker_id.hpp"

#include <algorithm>
#include <cctype>

namespace dibs::sql_common {

namespace {
bool same_name(const std::string& a, const std::string& b, bool fold_case) {
  if (!fold_case) return a == b;
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}
}  // namespace

std::uint64_t retry_failed(sql_admin_link& link, const retry_filter& which) {
  return link.change(change::retry_failed{&which});
}

void list_failed(sql_admin_link& link, const retry_filter& which, const std::function<void(const failed_item&)>& each) {
  // A table can hold millions of failed rows: read in pages, handed on as they come.
  constexpr std::size_t page = 1000;
  const auto server = link.admin_facts().server;
  for (std::size_t offset = 0;; offset += page) {
    const auto got = link.ask(ask::failed_page{&which, page, offset});
    for (const auto& r : got) each(failed_item_of(r, server));
    if (got.size() < page) break;
  }
}

std::vector<failure_reason> failure_reasons(sql_admin_link& link, std::size_t top) {
  std::vector<failure_reason> out;
  const auto server = link.admin_facts().server;
  for (const auto& r : link.ask(ask::failure_reasons{top})) out.push_back(failure_reason_of(r, server));
  return out;
}

// A target column that holds something else than JSON makes the server refuse the question: not
// counted then.
std::optional<std::uint64_t> no_data_count(sql_admin_link& link) {
  try {
    const auto rows = link.ask(ask::no_data{});
    return rows.empty() || rows[0].empty() ? std::uint64_t{0} : count_cell(rows[0][0], link.admin_facts().server);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<lease_holder> lease_holders(sql_admin_link& link) {
  std::vector<lease_holder> out;
  const auto server = link.admin_facts().server;
  for (const auto& r : link.ask(ask::lease_holders{})) out.push_back(lease_holder_of(r, server));
  return out;
}

std::uint64_t release_worker(sql_admin_link& link, const std::string& name) {
  require_worker_id(name);
  return link.change(change::release_worker{name});
}

std::vector<pending_sample> sample_pending_items(sql_admin_link& link, std::size_t n) {
  std::vector<std::string> columns;
  for (auto& r : link.ask(ask::table_columns{})) columns.push_back(r.empty() ? "" : r[0].value_or(""));
  const auto facts = link.admin_facts();
  const bool has_source = std::any_of(columns.begin(), columns.end(), [&](const std::string& c) {
    return same_name(c, facts.source, facts.names_fold_case);
  });
  // Rows with a usable source first; when there are none, any open row (its missing source is
  // what the pre-flight then reports).
  auto rows = link.ask(ask::open_sample{has_source, true, n});
  if (rows.empty() && has_source) rows = link.ask(ask::open_sample{true, false, n});
  std::vector<pending_sample> out;
  for (const auto& row : rows) out.push_back(link.sampled(row, has_source, columns));
  return out;
}

std::optional<pending_sample> sample_done(sql_admin_link& link) {
  const auto rows = link.ask(ask::done_sample{});
  if (rows.empty()) return std::nullopt;
  return sampled_row(rows[0], link.admin_facts().source, true, {});
}

}  // namespace dibs::sql_common
