// The names dibs keeps its claims under in a user's SQL table, for both dialects, and the names an
// earlier dibs used for them. Every one is prefixed `dibs_`: a table's own `error`, `attempts` or
// `lock_until` is the user's, never read nor written (docs/stores.md lists them all). dibs_pick
// and dibs_open (MySQL/MariaDB) had that prefix from the start; the others are renamed by `dibs
// init` in a table an earlier dibs prepared (table_gap.hpp: the upgrade).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace dibs::sql_common {

// The lease, the attempts and the failure record (both dialects), in the order tables get them.
inline constexpr const char* lock_by_column = "dibs_lock_by";
inline constexpr const char* lock_token_column = "dibs_lock_token";
inline constexpr const char* lock_until_column = "dibs_lock_until";
inline constexpr const char* attempts_column = "dibs_attempts";
inline constexpr const char* error_column = "dibs_error";
inline constexpr const char* http_status_column = "dibs_http_status";
inline constexpr const char* failed_at_column = "dibs_failed_at";

// A column an earlier dibs kept under a plain name, and the name it has now.
struct renamed_column {
  const char* earlier;
  const char* now;
};
inline constexpr std::array<renamed_column, 7> renamed_columns{{
    {"lock_by", lock_by_column},
    {"lock_token", lock_token_column},
    {"lock_until", lock_until_column},
    {"attempts", attempts_column},
    {"error", error_column},
    {"http_status", http_status_column},
    {"failed_at", failed_at_column},
}};

// The columns a run writes besides the target: the lease, the attempts, the failure record.
inline std::vector<std::string> written_columns() {
  std::vector<std::string> out;
  for (const auto& r : renamed_columns) out.emplace_back(r.now);
  return out;
}

// The setting dibs init records with a table it prepared with these names (recorded_settings.hpp),
// and its value: a table so recorded that lacks one of dibs's columns gets it, where a table
// without the record that has some of dibs's names but not all is refused (they are the user's).
inline constexpr const char* layout_setting = "columns";
inline constexpr const char* prefixed_layout = "dibs_";

}  // namespace dibs::sql_common
