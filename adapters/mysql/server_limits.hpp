// What a MySQL or MariaDB server can't store, decided without a server (unit-tested alone).
//
// Answers are checked before they are sent against the limits we know of -- MariaDB's JSON
// columns refuse nesting 32 levels deep (MySQL's 101), and a statement may not exceed
// max_allowed_packet -- so the common cases never cost a refused write (what the server refuses
// anyway is server_errors.hpp's to classify).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dibs::mysql {

struct server_limits {
  int max_json_depth = 31;                       // deepest nesting a JSON column takes
  std::size_t max_statement_bytes = 16u << 20;   // max_allowed_packet
  bool delete_returning = false;                 // DELETE ... RETURNING (MariaDB; MySQL has none)
};

// From `SELECT VERSION(), @@max_allowed_packet`.
server_limits limits_for(std::string_view version, std::uint64_t max_allowed_packet);

// Nesting depth of a JSON text (objects and arrays; strings skipped), 0 for a scalar.
int json_depth(std::string_view json);

// Why the server could not store `json` as a target value (nullopt when it can). `quoted_bytes`
// is the size of the escaped value as it goes into the statement.
std::optional<std::string> unstorable_answer(std::string_view json, std::size_t quoted_bytes, const server_limits& lim);

}  // namespace dibs::mysql
