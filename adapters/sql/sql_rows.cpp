#include "sql_rows.hpp"

#include <dibs/ipapi/ipv4_ranges.hpp>
#include "engine/src/server_number.hpp"
#include <profiles/ipapi/skewed_draw.hpp>

#include <algorithm>
#include <iterator>
#include <chrono>

namespace dibs::sql_common {

std::uint64_t count_cell(const std::optional<std::string>& cell, const char* server) {
  return server_number<std::uint64_t>(cell, server);
}

store_stats stats_of(const std::vector<server_row>& rows, const char* server) {
  store_stats s;
  if (rows.empty()) return s;
  const auto& row = rows[0];
  s.done = count_cell(row.at(0), server);
  s.failed = count_cell(row.at(1), server);
  s.pending = count_cell(row.at(2), server);
  s.leased_live = count_cell(row.at(3), server);
  s.leased_expired = count_cell(row.at(4), server);
  return s;
}

failure_reason failure_reason_of(const server_row& row, const char* server) {
  failure_reason f;
  f.reason = row.at(0).value_or("");
  f.count = count_cell(row.at(1), server);
  f.example_ids.push_back(row.at(2).value_or(""));
  if (row.at(3) != row.at(2)) f.example_ids.push_back(row.at(3).value_or(""));
  return f;
}

lease_holder lease_holder_of(const server_row& row, const char* server) {
  lease_holder h;
  h.by = row.at(0).value_or("");
  h.leased = count_cell(row.at(1), server);
  h.expired = count_cell(row.at(2), server);
  h.earliest_until_s = static_cast<double>(server_number<std::int64_t>(row.at(3), server)) / 1e6;
  h.latest_until_s = static_cast<double>(server_number<std::int64_t>(row.at(4), server)) / 1e6;
  return h;
}

pending_sample sampled_row(const server_row& row, const std::string& source, bool has_source, std::vector<std::string> columns,
                           const typed_read& typed) {
  pending_sample s;
  s.id = row.empty() ? std::string() : row[0].value_or("");
  s.source.name = source;
  if (has_source && row.size() > 1 && row[1]) {
    s.source.st = job_field::state::string;
    s.source.value = *row[1];
  }
  s.fields = std::move(columns);
  if (has_source && !typed.columns.empty()) {  // as a claim reads them (with_typed_cells)
    job j;
    j.fields.push_back(s.source);
    auto cells = row;  // a sample's: read once, rarely
    j = with_typed_cells(std::move(j), cells, 2, typed);
    s.source = std::move(j.fields.front());
    s.more.assign(std::make_move_iterator(j.fields.begin() + 1), std::make_move_iterator(j.fields.end()));
  }
  return s;
}

std::size_t seed_addresses(std::size_t n, std::uint64_t seed, std::size_t distinct,
                           const std::function<std::size_t(const std::vector<std::string>&)>& insert) {
  ipv4_draw draw(n, distinct, seed);
  std::size_t inserted = 0;
  while (inserted < n) {
    const std::size_t k = std::min<std::size_t>(1000, n - inserted);
    std::vector<std::string> ips;
    for (std::size_t i = 0; i < k; ++i) ips.push_back(ipv4_to_string(draw.next()));
    inserted += insert(ips);
  }
  return inserted;
}

failed_item failed_item_of(const server_row& row, const char* server) {
  failed_item f;
  f.id = row.at(0).value_or("");
  f.source = row.at(1);
  f.reason = row.at(2).value_or("");
  f.http_status = static_cast<int>(count_cell(row.at(3), server));
  f.attempts = static_cast<int>(count_cell(row.at(4), server));
  if (row.at(5)) f.failed_at = store_time(std::chrono::microseconds(static_cast<std::int64_t>(count_cell(row.at(5), server))));
  return f;
}

failed_since since_of(const retry_filter& which) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  failed_since out;
  if (which.since) out.since_epoch_us = duration_cast<microseconds>(which.since->time_since_epoch()).count();
  if (which.since_ago) out.since_ago_us = duration_cast<microseconds>(*which.since_ago).count();
  return out;
}

}  // namespace dibs::sql_common
