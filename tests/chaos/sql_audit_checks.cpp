// The checks both SQL checkers read alike from a table and its audit record (sql_checker.hpp).
#include "sql_checker.hpp"

#include <cstdio>

namespace dibs::chaos {

std::string audit_of(const std::string& table) { return table + "_audit"; }

// Only the first write must come from the lease's holder; any later one is a second write,
// reported as such.
std::string first_writes(const std::string& a) {
  return "(SELECT * FROM " + a + " a WHERE a.kind IN ('done', 'fail') AND a.seq = (SELECT MIN(b.seq) FROM " + a +
         " b WHERE b.id = a.id AND b.kind IN ('done', 'fail'))) a";
}

void check_audit(const query_number& number, const sql_check_input& in, const std::string& holder_pid, int round,
                 tally& t) {
  const auto& tb = in.table;
  const auto a = audit_of(tb);
  auto v = [&](const char* kind, const std::string& what, std::uint64_t n) { report_violation(t, round, kind, what, n); };
  const auto rows = number("SELECT COUNT(*) FROM " + tb);
  const auto deletes = number("SELECT COUNT(*) FROM " + a + " WHERE kind = 'delete'");
  if (rows != in.items)
    v("lost", "missing of the " + std::to_string(in.items) + " seeded (" + std::to_string(deletes) + " delete(s) audited)",
      rows < in.items ? in.items - rows : rows - in.items);
  v("open", "neither done nor failed", number("SELECT COUNT(*) FROM " + tb + " WHERE location IS NULL AND dibs_failed_at IS NULL"));
  v("leased", "still leased", number("SELECT COUNT(*) FROM " + tb + " WHERE dibs_lock_token IS NOT NULL"));
  v("done-and-failed", "both done and failed",
    number("SELECT COUNT(*) FROM " + tb + " WHERE location IS NOT NULL AND dibs_failed_at IS NOT NULL"));
  v("attempts", "claimed more than --max-attempts times",
    number("SELECT COUNT(*) FROM " + tb + " WHERE dibs_attempts > " + std::to_string(in.max_attempts)));
  v("written-twice", "written (done or failed) more than once",
    number("SELECT COUNT(*) FROM (SELECT id FROM " + a + " WHERE kind IN ('done', 'fail') GROUP BY id HAVING COUNT(*) > 1) x"));
  v("unrecorded", "done or failed without a recorded write",
    number("SELECT COUNT(*) FROM " + tb + " t WHERE (location IS NOT NULL OR dibs_failed_at IS NOT NULL) AND NOT EXISTS "
           "(SELECT 1 FROM " + a + " w WHERE w.id = t.id AND w.kind IN ('done', 'fail'))"));
  // The first write must come from the process that claimed the lease the row held then: that
  // lease's claim is on record, made by the writer's process, whose pid the holder's name carries.
  const std::string by_holder = "a.held_token IS NOT NULL AND a.pid IS NOT NULL AND " + holder_pid +
                                " = a.pid AND EXISTS (SELECT 1 FROM " + a + " c WHERE c.kind = 'claim' AND c.id = a.id "
                                "AND c.new_token = a.held_token AND c.pid = a.pid AND c.seq < a.seq)";
  const auto firsts = first_writes(a);
  v("stale-writer", "done by a process not holding the row's lease",
    number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND NOT (" + by_holder + ")"));
  v("stale-fail", "failed by a process not holding the row's lease",
    number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'fail' AND NOT (" + by_holder + ")"));
  // A completion is fenced when the write locks its rows (MariaDB), or on lock_until >= now(), now()
  // being its transaction's start (PostgreSQL), and the row lock keeps every other worker out until
  // the commit: a lease that had run out before the transaction began is a violation; one that ran
  // out during the transaction (or while the statement waited for the row) is a counted late commit.
  // (Completions only: a failure is fenced by its lease's token alone, by design.)
  v("expired-lease", "written under a lease that had run out before the writer's transaction began",
    number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND a.held_until < a.trx_started"));
  t.late_commits += number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND a.held_until < a.written_at "
                           "AND NOT (a.held_until < a.trx_started)");
}

void count_outcomes(const query_number& number, const std::string& table, tally& t) {
  t.done += number("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL");
  t.failed += number("SELECT COUNT(*) FROM " + table + " WHERE dibs_failed_at IS NOT NULL");
  t.takeovers += number("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL AND dibs_attempts > 1");
}

expected_outcome outcome_judge::judge(const std::string& address, bool done, bool failed, const std::string& reason) {
  auto e = expected_for(address, store_, in_.poison_rate, in_.poison_seed);
  poisoned_ += e.poison != stub::poison::none;
  if (done) {
    if (!e.done) ++should_fail_;
  } else if (failed) {
    if (e.done ? ++healthy_failed_ <= 3 : !reason_fits(e, reason, store_) && ++bad_reason_ <= 3)
      std::printf("chaos: round %d: failed: %s (%s): %.300s\n", round_, address.c_str(), stub::poison_name(e.poison),
                  reason.c_str());
  }
  return e;
}

void outcome_judge::report(tally& t, std::uint64_t wrong_answer) const {
  auto v = [&](const char* kind, const std::string& what, std::uint64_t n) { report_violation(t, round_, kind, what, n); };
  v("wrong-answer", "holding an answer the stub never gave for their address", wrong_answer);
  v("should-fail", "done although the store must refuse their answer", should_fail_);
  v("healthy-failed", "failed although their address has an answer the store can hold", healthy_failed_);
  v("wrong-reason", "failed without the reason their address calls for", bad_reason_);
  t.poisoned += poisoned_;
}

}  // namespace dibs::chaos
