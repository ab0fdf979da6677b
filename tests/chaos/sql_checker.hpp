// The SQL checkers, MariaDB's and PostgreSQL's. Each installs triggers that record, in
// <table>_audit, every claim (a new lease token), every update that leaves the target set or sets
// failed_at (whatever the values: a second write with the same answer is recorded too) and every
// delete, each with the writing process, the lease the row held at that moment, the start of the
// writer's transaction and the server's time; the checks then read only the table and that record,
// the same kinds on both (sql_audit_checks.cpp), besides each store's own answers.
//   MariaDB     the session's process is @dibs_client_pid, which every dibs connection sets; the
//               transaction's start is information_schema.INNODB_TRX's, read in the trigger.
//   PostgreSQL  a PL/pgSQL trigger; the process is the pid in the session's application_name
//               (`dibs-<pid>`, which pg_round gives every worker's sessions), with the backend pid;
//               the transaction's start is transaction_timestamp() (exact, unlike InnoDB's) and the
//               write's time clock_timestamp().
#pragma once

#include "chaos_common.hpp"
#include "expected_outcome.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace dibs::chaos {

struct sql_check_input {
  std::string uri;    // the driver's own (not through the proxy)
  std::string table;
  std::size_t items = 0;  // seeded
  int max_attempts = 8;
  double poison_rate = 0;
  std::uint64_t poison_seed = 0;
};

// MariaDB (mysql_checker.cpp). inject_violations is the self-test: one of each injected_kinds, as
// a broken store or a stale worker would leave it.
void install_audit(const sql_check_input& in);
void inject_violations(const sql_check_input& in);
void check_mysql(const sql_check_input& in, int round, tally& t);
void drop_audit(const sql_check_input& in);

// PostgreSQL (pg_checker.cpp), the same.
void install_pg_audit(const sql_check_input& in);
void inject_pg_violations(const sql_check_input& in);
void check_pg(const sql_check_input& in, int round, tally& t);
void drop_pg_audit(const sql_check_input& in);

// What both read alike (sql_audit_checks.cpp), through `number` (a query's first cell, 0 when
// NULL): rows lost, open, still leased, done and failed, claimed too often, written twice or
// without a record, written by a process not holding the lease or under a lease that had run out
// before the writer's transaction began; late commits counted. `holder_pid` is the dialect's
// expression of the pid in a lease holder's name (a.held_by).
using query_number = std::function<std::uint64_t(const std::string& sql)>;
std::string audit_of(const std::string& table);
// The first write (done or fail) of each row, as the subquery `a`.
std::string first_writes(const std::string& audit);
void check_audit(const query_number& number, const sql_check_input& in, const std::string& holder_pid, int round,
                 tally& t);
// The end's tallies: done, failed, taken over.
void count_outcomes(const query_number& number, const std::string& table, tally& t);

// Every row's outcome, from its address: done with exactly the stub's answer (each checker compares
// answers its store's way), or failed (only those that must) with the reason that calls for.
class outcome_judge {
 public:
  outcome_judge(const sql_check_input& in, store_kind store, int round) : in_(in), store_(store), round_(round) {}
  // The row of `address`; what it must be (a done row's answer is to be compared with .answer).
  expected_outcome judge(const std::string& address, bool done, bool failed, const std::string& reason);
  // The violations found, `wrong_answer` (done rows holding another answer) with them.
  void report(tally& t, std::uint64_t wrong_answer) const;

 private:
  const sql_check_input& in_;
  store_kind store_;
  int round_;
  std::uint64_t should_fail_ = 0, healthy_failed_ = 0, bad_reason_ = 0, poisoned_ = 0;
};

}  // namespace dibs::chaos
