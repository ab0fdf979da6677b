// Where the PostgreSQL tests find their server: POSTGRES_URI, or the URI the ctest fixture wrote
// (tests/servers/postgres_ctl.sh).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dibs::test {

// postgresql://user@host:port/db (no table: add ?table=... per test).
inline std::string postgres_base_uri() {
  if (const char* uri = std::getenv("POSTGRES_URI"); uri && *uri) return uri;
  std::ifstream in(DIBS_POSTGRES_URI_FILE);
  std::string uri;
  std::getline(in, uri);
  if (uri.empty()) throw std::runtime_error(std::string("no POSTGRES_URI and nothing in ") + DIBS_POSTGRES_URI_FILE);
  return uri;
}

inline std::string postgres_uri_for(const std::string& table) {
  auto base = postgres_base_uri();
  return base + (base.find('?') == std::string::npos ? "?table=" : "&table=") + table;
}

inline std::string unique_pg_table(const std::string& prefix) {
  static int counter = 0;
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

}  // namespace dibs::test
