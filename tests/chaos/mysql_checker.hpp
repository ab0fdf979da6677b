// The MariaDB checker. Triggers record, in <table>_audit, every claim (a new lease token), every
// update that leaves the target set or sets failed_at (whatever the values: a second write with
// the same answer is recorded too) and every delete, each with the session's process
// (@dibs_client_pid, which every dibs connection sets), the lease the row held at that moment,
// the start of the writer's transaction (information_schema.INNODB_TRX, read in the trigger) and
// the server's time. The checks then read only the table and that record.
#pragma once

#include "chaos_common.hpp"

#include <string>

namespace dibs::chaos {

struct mysql_check_input {
  std::string uri;    // the driver's own (not through the proxy)
  std::string table;
  std::size_t items = 0;  // seeded
  int max_attempts = 8;
  double poison_rate = 0;
  std::uint64_t poison_seed = 0;
};

void install_audit(const mysql_check_input& in);
// The self-test: one of each injected_kinds, as a broken store or a stale worker would leave it.
void inject_violations(const mysql_check_input& in);
void check_mysql(const mysql_check_input& in, int round, tally& t);
void drop_audit(const mysql_check_input& in);

}  // namespace dibs::chaos
