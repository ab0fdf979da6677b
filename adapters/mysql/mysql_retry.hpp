// `dibs retry` and the failure breakdown of `dibs status` as SQL text for MySQL / MariaDB: plain
// functions, unit-tested without a server. Values come in already quoted by the connection
// (mysql_real_escape_string), numbers as numbers.
#pragma once

#include <adapters/mysql/mysql_protocol.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::mysql {

// Which failed rows: the reason contains `reason_quoted` ("" = any), failed at or after
// `since_epoch_us` (microseconds since the epoch) or within the last `since_ago_us`.
struct failed_rows {
  std::string reason_quoted;     // contained in the reason
  std::string reason_is_quoted;  // the whole reason, as failure_reasons groups it
  std::optional<std::int64_t> since_epoch_us;
  std::optional<std::int64_t> since_ago_us;
  // When set, only these rows: their keys as literals (key_literal); none: no row.
  std::optional<std::vector<std::string>> key_literals;
};

// The failed rows the selection names (never a pending, leased or done one).
std::string failed_condition(const table_names& n, const failed_rows& which);
// Back to pending: attempts 0, failure and lease cleared.
std::string retry_failed_rows(const table_names& n, const failed_rows& which);
// reason, count, smallest id, largest id: the `top` most frequent reasons, most frequent first.
std::string failure_reasons(const table_names& n, std::size_t top);
// `dibs failed`: key, source, reason, HTTP status, attempts, failure time (microseconds since the
// epoch) of the failed rows `which` selects, oldest failure first (then by key), `limit` from `offset`.
std::string failed_rows_listed(const table_names& n, const failed_rows& which, std::size_t limit, std::size_t offset);

}  // namespace dibs::mysql
