// Where the PostgreSQL tests find their server: POSTGRES_URI, or the URI the ctest fixture wrote
// (tests/servers/postgres_ctl.sh).
#pragma once

#include "support/server_env.hpp"

namespace dibs::test {

// postgresql://user@host:port/db (no table: add ?table=... per test).
inline std::string postgres_base_uri() { return server_uri("POSTGRES_URI", DIBS_POSTGRES_URI_FILE); }
inline std::string postgres_uri_for(const std::string& table) { return with_table(postgres_base_uri(), table); }
inline std::string unique_pg_table(const std::string& prefix) { return unique_name(prefix); }

}  // namespace dibs::test
