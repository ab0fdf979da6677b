// Connection strings without their secrets, for logs, summaries and error messages:
// "mongodb://user:secret@host/db" -> "mongodb://user:***@host/db".
#pragma once

#include <string>

namespace dibs {

// The secret runs to the LAST '@': a password may hold an unencoded '/', '?' or '@' (fuzzing found
// "user:pa/ss@host" shown whole when the authority was cut at the first '/'). Hiding too much of
// an odd URI is the safe way to be wrong.
inline std::string redact_uri(const std::string& uri) {
  const auto scheme = uri.find("://");
  if (scheme == std::string::npos) return uri;
  const auto start = scheme + 3;
  const auto at = uri.rfind('@');
  if (at == std::string::npos || at < start) return uri;
  const auto colon = uri.find(':', start);
  if (colon == std::string::npos || colon > at) return uri;  // a user name without a password
  return uri.substr(0, colon + 1) + "***" + uri.substr(at);
}

}  // namespace dibs
