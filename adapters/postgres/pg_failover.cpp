#include "pg_failover.hpp"
#include "pg_tls.hpp"

#include <cctype>
#include <cstddef>

namespace dibs::pg {

namespace {
bool names_session_attrs(const std::string& uri) {
  const auto q = uri.find('?');
  if (q == std::string::npos) return false;
  std::string query = uri.substr(q + 1);
  for (auto& c : query) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string key = "target_session_attrs=";
  for (std::size_t at = 0; (at = query.find(key, at)) != std::string::npos; at += key.size())
    if (at == 0 || query[at - 1] == '&') return true;
  return false;
}
}  // namespace

std::string with_read_write_target(const std::string& uri) {
  std::size_t hosts = 0;  // the authority's empty host (host= names the socket instead) is none
  for (const auto& h : uri_hosts(uri)) hosts += h.empty() ? 0 : 1;
  if (hosts < 2 || names_session_attrs(uri)) return uri;
  return uri + (uri.find('?') == std::string::npos ? "?" : "&") + "target_session_attrs=read-write";
}

}  // namespace dibs::pg
