// What both SQL stores read back from their servers, decoded once: a row of counts, a failure
// reason with its examples, a lease holder; and what both write the same way: dibs seed's rows in
// batches, and `dibs retry since`'s times. The statements differ by dialect (each store's
// protocol builder); the columns they return are in the order read here.
#pragma once

#include <adapters/sql/row_fields.hpp>
#include <dibs/admin_store.hpp>
#include <dibs/store.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dibs::sql_common {

// One row as a server sent it: each cell's text, nullopt for NULL.
using server_row = std::vector<std::optional<std::string>>;

// `server` names the server in the error a cell that is no number makes ("PostgreSQL").
// A count (NULL is 0).
std::uint64_t count_cell(const std::optional<std::string>& cell, const char* server);
// The stats statement's row: done, failed, pending, leased_live, leased_expired (no row: zeros).
store_stats stats_of(const std::vector<server_row>& rows, const char* server);
// reason, count, smallest id, largest id.
failure_reason failure_reason_of(const server_row& row, const char* server);
// key, source, reason, HTTP status, attempts, failure time in microseconds since the epoch.
failed_item failed_item_of(const server_row& row, const char* server);
// by, leased, expired, microseconds from the server's now to the earliest until and to the latest.
lease_holder lease_holder_of(const server_row& row, const char* server);

// The pre-flight's sample (admin_store::sample_pending) from a row of sample_open_row: its id, and
// its source when `has_source` (a NULL source, or a table without that column, is a missing
// field); `columns` are the table's.
// `typed`: the claim's JSON object of typed columns (row_fields.hpp), the row's third value when
// the source was read: the sample's source and more fields as a claim reads them.
pending_sample sampled_row(const server_row& row, const std::string& source, bool has_source, std::vector<std::string> columns,
                           const typed_read& typed = {});

// dibs seed: `n` random public IPv4 addresses (profiles/ipapi/skewed_draw.hpp: `distinct` > 0 draws from
// that many), handed to `insert` 1,000 at a time; returns the rows `insert` says it added.
std::size_t seed_addresses(std::size_t n, std::uint64_t seed, std::size_t distinct,
                           const std::function<std::size_t(const std::vector<std::string>&)>& insert);

// `dibs retry since`: the moment, and the span before the server's now, in microseconds.
struct failed_since {
  std::optional<std::int64_t> since_epoch_us;
  std::optional<std::int64_t> since_ago_us;
};
failed_since since_of(const retry_filter& which);

}  // namespace dibs::sql_common
