// `dibs retry` and the failure breakdown of `dibs status` as PostgreSQL statements: plain
// functions, unit-tested without a server. Every value travels as a parameter.
#pragma once

#include <adapters/postgres/pg_protocol.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::pg {

// Which failed rows: the reason contains `reason` ("" = any), failed at or after
// `since_epoch_us` (microseconds since the epoch) or within the last `since_ago_us`.
struct failed_rows {
  std::string reason;                    // contained in the reason
  std::optional<std::string> reason_is;  // the whole reason, as failure_reasons groups it
  std::optional<std::int64_t> since_epoch_us;
  std::optional<std::int64_t> since_ago_us;
  std::vector<std::string> ids;  // when not empty, only these rows (their keys as text)
};

// Back to pending: attempts 0, failure and lease cleared; never a pending, leased or done row.
statement retry_failed_rows(const table_names& n, const failed_rows& which);
// reason, count, smallest id, largest id: the `top` most frequent reasons, most frequent first.
statement failure_reasons(const table_names& n, std::size_t top);
// `dibs failed`: key, source, reason, HTTP status, attempts, failure time (microseconds since the
// epoch) of the failed rows `which` selects, oldest failure first (then by key), `limit` from `offset`.
statement failed_rows_listed(const table_names& n, const failed_rows& which, std::size_t limit, std::size_t offset);

}  // namespace dibs::pg
