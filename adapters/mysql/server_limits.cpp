#include "server_limits.hpp"

namespace dibs::mysql {

server_limits limits_for(std::string_view version, std::uint64_t max_allowed_packet) {
  server_limits lim;
  // MariaDB's json_valid() refuses depth 32 and deeper; MySQL's JSON type allows 100.
  const bool mariadb = version.find("MariaDB") != std::string_view::npos;
  lim.max_json_depth = mariadb ? 31 : 100;
  lim.delete_returning = mariadb;
  if (max_allowed_packet > 0) lim.max_statement_bytes = static_cast<std::size_t>(max_allowed_packet);
  return lim;
}

int json_depth(std::string_view json) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char ch : json) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
      continue;
    }
    switch (ch) {
      case '"': in_string = true; break;
      case '{': case '[':
        if (++depth > deepest) deepest = depth;
        break;
      case '}': case ']': --depth; break;
      default: break;
    }
  }
  return deepest;
}

std::optional<std::string> unstorable_answer(std::string_view json, std::size_t quoted_bytes, const server_limits& lim) {
  if (const int d = json_depth(json); d > lim.max_json_depth)
    return "the answer is JSON nested " + std::to_string(d) + " levels deep; the server's JSON columns take at most " +
           std::to_string(lim.max_json_depth);
  // Room for the rest of the statement (ids, the lease columns): a quarter of the packet.
  if (quoted_bytes > lim.max_statement_bytes - lim.max_statement_bytes / 4)
    return "the answer (" + std::to_string(json.size()) + " bytes) does not fit in one statement (max_allowed_packet " +
           std::to_string(lim.max_statement_bytes) + ")";
  return std::nullopt;
}

}  // namespace dibs::mysql
