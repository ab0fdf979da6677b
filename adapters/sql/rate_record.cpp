#include "rate_record.hpp"

#include "engine/src/server_number.hpp"

#include <algorithm>
#include <stdexcept>

namespace dibs::sql_common {

namespace {
struct row_state {
  rate_bucket_state state;
  std::int64_t now_us = 0;
};

row_state parse(const std::vector<server_row>& rows, const char* server) {
  if (rows.empty() || rows[0].size() < 3 || !rows[0][2]) throw std::runtime_error("dibs_rate: the origin's row is missing");
  const auto& r = rows[0];
  return {{server_number<std::int64_t>(r[0], server), server_number<std::int64_t>(r[1], server)},
          server_number<std::int64_t>(r[2], server)};
}
}  // namespace

std::int64_t span_us(const rate_block_request& r) {
  return static_cast<std::int64_t>(std::max<std::uint32_t>(r.want, 1)) * std::max<std::int64_t>(r.interval.count(), 1);
}

rate_block taken_block_of(const std::vector<server_row>& rows, std::uint32_t want, const char* server) {
  const auto row = parse(rows, server);
  return taken_block(row.state.tat_us, row.state.paused_until_us, row.now_us, want);
}

std::chrono::microseconds paused_for_of(const std::vector<server_row>& rows, const char* server) {
  if (rows.empty()) return std::chrono::microseconds{0};
  const auto row = parse(rows, server);
  return std::chrono::microseconds(paused_for_us(row.state, row.now_us));
}

}  // namespace dibs::sql_common
