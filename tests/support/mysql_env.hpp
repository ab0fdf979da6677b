// Where the MySQL/MariaDB tests find their server: MYSQL_URI, or the URI the ctest fixture wrote.
#pragma once

#include "support/process.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dibs::test {

// mysql://user@host:port/db (no table: add ?table=... per test).
inline std::string mysql_base_uri() {
  if (const char* uri = std::getenv("MYSQL_URI"); uri && *uri) return uri;
  std::ifstream in(DIBS_MYSQL_URI_FILE);
  std::string uri;
  std::getline(in, uri);
  if (uri.empty()) throw std::runtime_error(std::string("no MYSQL_URI and nothing in ") + DIBS_MYSQL_URI_FILE);
  return uri;
}

inline std::string mysql_uri_for(const std::string& table) {
  auto base = mysql_base_uri();
  return base + (base.find('?') == std::string::npos ? "?table=" : "&table=") + table;
}

inline std::string unique_table(const std::string& prefix) {
  static int counter = 0;
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

#ifdef DIBS_MARIADB_CTL
// Restarts the fixture's private server. It is started without this process's descriptors (not
// through system()): a server that inherited a socket of ours would keep that connection alive.
inline void restart_mariadb() {
  child_process restart({"bash", DIBS_MARIADB_CTL, "restart", DIBS_SERVERS_DIR});
  std::string said;
  if (restart.finish(said) != 0) throw std::runtime_error("the MariaDB restart failed: " + said);
}
#endif

}  // namespace dibs::test
