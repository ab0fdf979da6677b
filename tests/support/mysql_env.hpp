// Where the MySQL/MariaDB tests find their server: MYSQL_URI, or the URI the ctest fixture wrote.
#pragma once

#include "support/process.hpp"
#include "support/server_env.hpp"

#include <stdexcept>
#include <string>

namespace dibs::test {

// mysql://user@host:port/db (no table: add ?table=... per test).
inline std::string mysql_base_uri() { return server_uri("MYSQL_URI", DIBS_MYSQL_URI_FILE); }
inline std::string mysql_uri_for(const std::string& table) { return with_table(mysql_base_uri(), table); }
inline std::string unique_table(const std::string& prefix) { return unique_name(prefix); }

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
