// What a store URI naming several PostgreSQL servers (a primary and its standbys, libpq's
// `postgresql://h1:p1,h2:p2/db`) means for dibs, which only writes: connect to the server that
// takes writes. libpq's own default (target_session_attrs=any) takes the first server that
// answers, a standby as gladly as the primary, and every claim there would fail with SQLSTATE
// 25006 for as long as the run lasts; so such a URI gets target_session_attrs=read-write unless it
// names one itself. A session that meets 25006 all the same (its server was demoted) is a lost link
// (pg_protocol.hpp: classify): it is dropped and the next connection finds the new primary.
// Decided without a server (tests/unit/test_pg_protocol.cpp).
#pragma once

#include <string>

namespace dibs::pg {

// `uri` (no table parameter) with target_session_attrs=read-write added when it names more than
// one host and no target_session_attrs.
std::string with_read_write_target(const std::string& uri);

}  // namespace dibs::pg
