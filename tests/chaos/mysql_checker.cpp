#include "mysql_checker.hpp"

#include "expected_outcome.hpp"
#include "sql_session.hpp"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <stdexcept>

namespace dibs::chaos {

namespace {
std::string audit(const std::string& table) { return table + "_audit"; }

// The pid in a lease holder's name (engine: <host>-<pid>-<shard>).
constexpr const char* holder_pid = "CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(a.held_by, '-', -2), '-', 1) AS UNSIGNED)";

// The first write (done or fail) of each row: it alone must come from the lease's holder; any
// later one is a second write, reported as such.
std::string first_writes(const std::string& a) {
  return "SELECT * FROM " + a + " a WHERE a.kind IN ('done', 'fail') AND a.seq = (SELECT MIN(b.seq) FROM " + a +
         " b WHERE b.id = a.id AND b.kind IN ('done', 'fail'))";
}
}  // namespace

void install_audit(const mysql_check_input& in) {
  sql_session s(in.uri, ::getpid());
  const auto& t = in.table;
  const auto a = audit(t);
  s.execute("CREATE TABLE " + a + " (seq BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, kind VARCHAR(8), "
            "id BIGINT UNSIGNED, pid BIGINT NULL, session BIGINT UNSIGNED, held_by VARCHAR(128) NULL, "
            "held_token BIGINT UNSIGNED NULL, held_until DATETIME(6) NULL, new_by VARCHAR(128) NULL, "
            "new_token BIGINT UNSIGNED NULL, trx_started DATETIME(6) NULL, written_at DATETIME(6), "
            "KEY (id, kind))");
  // The transaction's start, as InnoDB shows it (whole seconds, from a cache refreshed at most
  // every 100 ms: it may be NULL or an earlier transaction's, never later than the real start,
  // so a lease that ran out before it had surely run out before the transaction began).
  const std::string trx = "(SELECT MIN(trx_started) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID())";
  s.execute("CREATE TRIGGER " + a + "_upd BEFORE UPDATE ON " + t + " FOR EACH ROW BEGIN "
            "IF NEW.location IS NOT NULL OR NEW.failed_at IS NOT NULL THEN "
            "INSERT INTO " + a + " (kind, id, pid, session, held_by, held_token, held_until, trx_started, written_at) VALUES "
            "(IF(NEW.location IS NOT NULL, 'done', 'fail'), OLD.id, @dibs_client_pid, CONNECTION_ID(), OLD.lock_by, "
            "OLD.lock_token, OLD.lock_until, " + trx + ", NOW(6)); "
            "ELSEIF NEW.lock_token IS NOT NULL AND NOT (NEW.lock_token <=> OLD.lock_token) THEN "
            "INSERT INTO " + a + " (kind, id, pid, session, held_by, held_token, held_until, new_by, new_token, written_at) "
            "VALUES ('claim', OLD.id, @dibs_client_pid, CONNECTION_ID(), OLD.lock_by, OLD.lock_token, OLD.lock_until, "
            "NEW.lock_by, NEW.lock_token, NOW(6)); END IF; END");
  s.execute("CREATE TRIGGER " + a + "_del BEFORE DELETE ON " + t + " FOR EACH ROW INSERT INTO " + a +
            " (kind, id, pid, session, held_by, held_token, held_until, written_at) VALUES ('delete', OLD.id, "
            "@dibs_client_pid, CONNECTION_ID(), OLD.lock_by, OLD.lock_token, OLD.lock_until, NOW(6))");
}

void drop_audit(const mysql_check_input& in) {
  sql_session s(in.uri, ::getpid());
  s.execute("DROP TABLE IF EXISTS " + audit(in.table));
}

void inject_violations(const mysql_check_input& in) {
  const auto& t = in.table;
  const auto a = audit(t);
  sql_session driver(in.uri, ::getpid());
  const auto done = driver.rows("SELECT id, location FROM " + t + " WHERE location IS NOT NULL ORDER BY id LIMIT 4");
  const auto failed = driver.rows("SELECT id FROM " + t + " WHERE failed_at IS NOT NULL ORDER BY id LIMIT 1");
  if (done.size() < 4 || failed.empty()) throw std::runtime_error("chaos: too few finished rows to break on purpose");
  // Rows are reopened as if never written, then written the way a broken store would let them be.
  auto reopen = [&](sql_session& as, const std::string& id, const std::string& holder, const std::string& token,
                    const std::string& until) {
    driver.execute("DELETE FROM " + a + " WHERE id = " + id);
    as.execute("UPDATE " + t + " SET location = NULL, failed_at = NULL, lock_by = '" + holder + "', lock_token = " + token +
               ", lock_until = " + until + " WHERE id = " + id);
  };
  const std::string release = "lock_by = NULL, lock_token = NULL, lock_until = NULL";
  // 1. written-twice: a second write of a done row, with the very same answer.
  sql_session p6(in.uri, 6);
  p6.execute("UPDATE " + t + " SET location = location WHERE id = " + *done[0][0]);
  // 2. stale-writer: process 1 holds the lease, process 2 writes.
  sql_session p1(in.uri, 1), p2(in.uri, 2);
  reopen(p1, *done[1][0], "ghost-1-0", "777", "NOW(6) + INTERVAL 1 HOUR");
  p2.execute("UPDATE " + t + " SET location = " + p2.quote(*done[1][1]) + ", " + release + " WHERE id = " + *done[1][0]);
  // 3. lost: a row deleted.
  driver.execute("DELETE FROM " + t + " WHERE id = " + *done[2][0]);
  // 4. expired-lease: the holder writes in a transaction begun an hour after its lease ran out.
  sql_session p3(in.uri, 3);
  reopen(p3, *done[3][0], "ghost-3-0", "778", "NOW(6) - INTERVAL 1 HOUR");
  p3.execute("START TRANSACTION");
  p3.execute("SELECT id FROM " + t + " WHERE id = " + *done[3][0] + " FOR UPDATE");
  p3.execute("DO SLEEP(0.3)");  // InnoDB's transaction list is cached up to 100 ms
  p3.execute("UPDATE " + t + " SET location = " + p3.quote(*done[3][1]) + ", " + release + " WHERE id = " + *done[3][0]);
  p3.execute("COMMIT");
  // 5. stale-fail: process 4 holds the lease, process 5 records the failure.
  sql_session p4(in.uri, 4), p5(in.uri, 5);
  reopen(p4, *failed[0][0], "ghost-4-0", "779", "NOW(6) + INTERVAL 1 HOUR");
  p5.execute("UPDATE " + t + " SET failed_at = NOW(6), " + release + " WHERE id = " + *failed[0][0]);
}

void check_mysql(const mysql_check_input& in, int round, tally& t) {
  sql_session s(in.uri, ::getpid());
  const auto& tb = in.table;
  const auto a = audit(tb);
  auto v = [&](const char* kind, const std::string& what, std::uint64_t n) { report_violation(t, round, kind, what, n); };
  const auto rows = s.number("SELECT COUNT(*) FROM " + tb);
  const auto deletes = s.number("SELECT COUNT(*) FROM " + a + " WHERE kind = 'delete'");
  if (rows != in.items)
    v("lost", "missing of the " + std::to_string(in.items) + " seeded (" + std::to_string(deletes) + " delete(s) audited)",
      rows < in.items ? in.items - rows : rows - in.items);
  v("open", "neither done nor failed", s.number("SELECT COUNT(*) FROM " + tb + " WHERE location IS NULL AND failed_at IS NULL"));
  v("leased", "still leased", s.number("SELECT COUNT(*) FROM " + tb + " WHERE lock_token IS NOT NULL"));
  v("done-and-failed", "both done and failed",
    s.number("SELECT COUNT(*) FROM " + tb + " WHERE location IS NOT NULL AND failed_at IS NOT NULL"));
  v("attempts", "claimed more than --max-attempts times",
    s.number("SELECT COUNT(*) FROM " + tb + " WHERE attempts > " + std::to_string(in.max_attempts)));
  v("written-twice", "written (done or failed) more than once",
    s.number("SELECT COUNT(*) FROM (SELECT id FROM " + a + " WHERE kind IN ('done', 'fail') GROUP BY id HAVING COUNT(*) > 1) x"));
  v("unrecorded", "done or failed without a recorded write",
    s.number("SELECT COUNT(*) FROM " + tb + " t WHERE (location IS NOT NULL OR failed_at IS NOT NULL) AND NOT EXISTS "
             "(SELECT 1 FROM " + a + " w WHERE w.id = t.id AND w.kind IN ('done', 'fail'))"));
  // The first write must come from the process that claimed the lease the row held then: that
  // lease's claim is on record, made by the writer's process, whose pid the holder's name carries.
  const std::string by_holder = "a.held_token IS NOT NULL AND a.pid IS NOT NULL AND " + std::string(holder_pid) +
                                " = a.pid AND EXISTS (SELECT 1 FROM " + a + " c WHERE c.kind = 'claim' AND c.id = a.id "
                                "AND c.new_token = a.held_token AND c.pid = a.pid AND c.seq < a.seq)";
  const auto firsts = "(" + first_writes(a) + ") a";
  v("stale-writer", "done by a process not holding the row's lease",
    s.number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND NOT (" + by_holder + ")"));
  v("stale-fail", "failed by a process not holding the row's lease",
    s.number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'fail' AND NOT (" + by_holder + ")"));
  // The fence is checked when the write locks its rows, and the row lock keeps every other worker
  // out until the commit: a lease that runs out during the transaction is a counted late commit;
  // one that had run out before the transaction began is a violation.
  // (Completions only: a failure is fenced by its lease's token alone, by design.)
  v("expired-lease", "written under a lease that had run out before the writer's transaction began",
    s.number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND a.held_until < a.trx_started"));
  t.late_commits += s.number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND a.held_until < a.written_at "
                             "AND NOT (a.held_until < a.trx_started)");
  t.unknown_trx_start += s.number("SELECT COUNT(*) FROM " + firsts + " WHERE a.kind = 'done' AND a.trx_started IS NULL");

  // Every row's outcome, from its address: done with exactly the stub's answer, or failed (only
  // those that must) with the reason that calls for.
  const auto store = store_kind::mariadb;
  std::uint64_t wrong_answer = 0, should_fail = 0, healthy_failed = 0, bad_reason = 0, poisoned = 0;
  for (const auto& r : s.rows("SELECT originatingIp, location, failed_at IS NOT NULL, error FROM " + tb)) {
    const auto e = expected_for(r[0].value_or(""), store, in.poison_rate, in.poison_seed);
    poisoned += e.poison != stub::poison::none;
    if (r[1]) {
      if (!e.done) ++should_fail;
      else if (*r[1] != e.answer) ++wrong_answer;
    } else if (r[2] && *r[2] == "1") {
      const auto reason = r[3].value_or("");
      if (e.done ? ++healthy_failed <= 3 : !reason_fits(e, reason, store) && ++bad_reason <= 3)
        std::printf("chaos: round %d: failed: %s (%s): %.300s\n", round, r[0].value_or("?").c_str(),
                    stub::poison_name(e.poison), reason.c_str());
    }
  }
  v("wrong-answer", "holding an answer the stub never gave for their address", wrong_answer);
  v("should-fail", "done although the store must refuse their answer", should_fail);
  v("healthy-failed", "failed although their address has an answer the store can hold", healthy_failed);
  v("wrong-reason", "failed without the reason their address calls for", bad_reason);
  t.poisoned += poisoned;
  t.done += s.number("SELECT COUNT(*) FROM " + tb + " WHERE location IS NOT NULL");
  t.failed += s.number("SELECT COUNT(*) FROM " + tb + " WHERE failed_at IS NOT NULL");
  t.takeovers += s.number("SELECT COUNT(*) FROM " + tb + " WHERE location IS NOT NULL AND attempts > 1");
}

}  // namespace dibs::chaos
