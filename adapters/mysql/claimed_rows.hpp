// What a claim's locked rows become, decided without a server: the row of `claim_rows`
// (id, source, attempts after this claim, the new until) -> the job the engine gets.
#pragma once

#include <adapters/sql/row_fields.hpp>
#include <adapters/sql/sql_rows.hpp>

#include <dibs/admin_store.hpp>
#include <dibs/job.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::mysql {

using sql_row = sql_common::server_row;

// "2026-11-22 03:04:05.123456" (a DATETIME(6) in UTC, as the session's time zone makes it) ->
// the time point; the epoch for NULL or text that is not such a value.
store_time parse_datetime(const char* text);

// The job for one locked row: a NULL source is a missing field (the engine fails it, naming the
// field), anything else is its string.
job claimed_job(sql_row locked, const std::string& by, std::uint64_t token, const std::string& source,
                const sql_common::typed_read& more = {});

// Whether `columns` holds `name`; column names compare without case, as the server does.
bool has_column(const std::vector<std::string>& columns, const std::string& name);
// The pre-flight's sample from a row of sample_open_row (sql/sql_rows.hpp).
using sql_common::sampled_row;

}  // namespace dibs::mysql
