// The postgres-failover round's servers: a primary and its streaming standby
// (tests/servers/postgres_pair_ctl.sh, asynchronous replication), fresh for each round.
#pragma once

#include <string>

namespace dibs::chaos {

void start_pair();
void stop_pair();
// libpq's multi-host URI of both (target_session_attrs=read-write), no table.
std::string pair_uri();
// The primary SIGKILLed (every process of it), the standby promoted; returns once it takes writes.
void fail_over();

}  // namespace dibs::chaos
