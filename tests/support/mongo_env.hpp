// Where the MongoDB tests find their server: MONGODB_URI, or the URI the ctest fixture wrote.
#pragma once

#include "support/server_env.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dibs::test {

inline std::string mongodb_uri() {
  if (const char* uri = std::getenv("MONGODB_URI"); uri && *uri) return uri;
#ifdef DIBS_MONGODB_URI_FILE
  const char* file = DIBS_MONGODB_URI_FILE;  // written by the ctest fixture that starts the server
#else
  const char* file = std::getenv("DIBS_MONGODB_URI_FILE");
  if (!file) throw std::runtime_error("no MONGODB_URI and no DIBS_MONGODB_URI_FILE");
#endif
  std::ifstream in(file);
  std::string uri;
  std::getline(in, uri);
  if (uri.empty()) throw std::runtime_error(std::string("empty ") + file);
  return uri;
}

// `uri` with one more option ("name=value") in its query.
inline std::string with_option(const std::string& uri, const std::string& option) {
  if (uri.find('?') != std::string::npos) return uri + "&" + option;
  const auto hosts_at = uri.find("://");
  const bool has_path = uri.find('/', hosts_at == std::string::npos ? 0 : hosts_at + 3) != std::string::npos;
  return uri + (has_path ? "?" : "/?") + option;
}

// The environment's value, else the build's default.
inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// A collection name no other test (or earlier run) uses.
inline std::string unique_collection(const std::string& prefix) { return unique_name(prefix); }

}  // namespace dibs::test
