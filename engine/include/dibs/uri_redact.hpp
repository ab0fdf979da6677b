// Connection strings without their secrets, for logs, summaries and error messages:
// "mongodb://user:secret@host/db" -> "mongodb://user:***@host/db".
#pragma once

#include <string>

namespace dibs {

inline std::string redact_uri(const std::string& uri) {
  const auto scheme = uri.find("://");
  if (scheme == std::string::npos) return uri;
  const auto start = scheme + 3;
  const auto end = uri.find_first_of("/?", start);
  const auto at = uri.rfind('@', end == std::string::npos ? std::string::npos : end);
  if (at == std::string::npos || at < start) return uri;
  const auto colon = uri.find(':', start);
  if (colon == std::string::npos || colon > at) return uri;  // a user name without a password
  return uri.substr(0, colon + 1) + "***" + uri.substr(at);
}

}  // namespace dibs
