// The PostgreSQL checker. A PL/pgSQL trigger records, in <table>_audit, every claim (a new lease
// token), every update that leaves the target set or sets failed_at (whatever the values: a second
// write with the same answer is recorded too) and every delete, each with the writing process
// (the pid in its session's application_name, `dibs-<pid>`, which pg_round gives every worker's
// sessions), the session's backend pid, the lease the row held at that moment, the start of the
// writer's transaction (transaction_timestamp(): exact here, unlike InnoDB's) and the time of the
// write (clock_timestamp()). The checks then read only the table and that record: the same kinds
// as the MariaDB checker.
#pragma once

#include "chaos_common.hpp"

#include <string>

namespace dibs::chaos {

struct pg_check_input {
  std::string uri;    // the driver's own (not through the proxy)
  std::string table;
  std::size_t items = 0;  // seeded
  int max_attempts = 8;
  double poison_rate = 0;
  std::uint64_t poison_seed = 0;
};

void install_pg_audit(const pg_check_input& in);
// The self-test: one of each injected_kinds, as a broken store or a stale worker would leave it.
void inject_pg_violations(const pg_check_input& in);
void check_pg(const pg_check_input& in, int round, tally& t);
void drop_pg_audit(const pg_check_input& in);

}  // namespace dibs::chaos
