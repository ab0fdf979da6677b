// `dibs retry --since`: a span before now ("2h", "90m", as duration_flag reads them) or a
// moment in RFC 3339 ("2026-11-23T17:00:00Z", "2026-11-23T18:00:00+01:00", fractions allowed).
#pragma once

#include <dibs/admin_store.hpp>

#include <optional>
#include <string>

namespace dibs::cli {

// The moment, or nullopt when `text` is not RFC 3339 (a date, 'T' or ' ', a time, Z or an offset).
std::optional<store_time> parse_rfc3339(const std::string& text);
// Sets `which.since_ago` or `which.since`; std::invalid_argument naming `flag` otherwise.
void since_flag(const std::string& flag, const std::string& text, retry_filter& which);

}  // namespace dibs::cli
