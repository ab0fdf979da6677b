// The shared rate's record (`rate_scope store`) as both SQL stores read it back: one row per
// API origin in `dibs_rate`, its schedule and pause by the server's clock (rate_bucket.hpp does
// the arithmetic). Each store writes its dialect's statements (mysql_shared_rate.hpp,
// pg_shared_rate.hpp); what they return is decoded here, once.
#pragma once

#include <adapters/sql/sql_rows.hpp>

#include "engine/src/rate_bucket.hpp"
#include "engine/src/shared_rate_store.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

namespace dibs::sql_common {

// How far a block of `r.want` slots moves the schedule on, in microseconds (at least one slot of
// at least 1 us).
std::int64_t span_us(const rate_block_request& r);

// The row a take returns (the block's start, paused_until_us, the server's now, in us) as the
// block it grants. Throws std::runtime_error when the row is missing.
rate_block taken_block_of(const std::vector<server_row>& rows, std::uint32_t want, const char* server);

// The row a read returns (tat_us, paused_until_us, the server's now): how long the origin is
// still paused; 0 without a row (never used, never paused).
std::chrono::microseconds paused_for_of(const std::vector<server_row>& rows, const char* server);

}  // namespace dibs::sql_common
