// The MariaDB checker (sql_checker.hpp): its audit triggers, the violations its self-test
// injects, and its answers compared as text.
#include "sql_checker.hpp"

#include "sql_session.hpp"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <stdexcept>

namespace dibs::chaos {

namespace {
// The pid in a lease holder's name (engine: <host>-<pid>-<shard>).
constexpr const char* holder_pid = "CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(a.held_by, '-', -2), '-', 1) AS UNSIGNED)";
}  // namespace

void install_audit(const sql_check_input& in) {
  sql_session s(in.uri, ::getpid());
  const auto& t = in.table;
  const auto a = audit_of(t);
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
            "IF NEW.location IS NOT NULL OR NEW.dibs_failed_at IS NOT NULL THEN "
            "INSERT INTO " + a + " (kind, id, pid, session, held_by, held_token, held_until, trx_started, written_at) VALUES "
            "(IF(NEW.location IS NOT NULL, 'done', 'fail'), OLD.id, @dibs_client_pid, CONNECTION_ID(), OLD.dibs_lock_by, "
            "OLD.dibs_lock_token, OLD.dibs_lock_until, " + trx + ", NOW(6)); "
            "ELSEIF NEW.dibs_lock_token IS NOT NULL AND NOT (NEW.dibs_lock_token <=> OLD.dibs_lock_token) THEN "
            "INSERT INTO " + a + " (kind, id, pid, session, held_by, held_token, held_until, new_by, new_token, written_at) "
            "VALUES ('claim', OLD.id, @dibs_client_pid, CONNECTION_ID(), OLD.dibs_lock_by, OLD.dibs_lock_token, OLD.dibs_lock_until, "
            "NEW.dibs_lock_by, NEW.dibs_lock_token, NOW(6)); END IF; END");
  s.execute("CREATE TRIGGER " + a + "_del BEFORE DELETE ON " + t + " FOR EACH ROW INSERT INTO " + a +
            " (kind, id, pid, session, held_by, held_token, held_until, written_at) VALUES ('delete', OLD.id, "
            "@dibs_client_pid, CONNECTION_ID(), OLD.dibs_lock_by, OLD.dibs_lock_token, OLD.dibs_lock_until, NOW(6))");
}

void drop_audit(const sql_check_input& in) {
  sql_session s(in.uri, ::getpid());
  s.execute("DROP TABLE IF EXISTS " + audit_of(in.table));
}

void inject_violations(const sql_check_input& in) {
  const auto& t = in.table;
  const auto a = audit_of(t);
  sql_session driver(in.uri, ::getpid());
  const auto done = driver.rows("SELECT id, location FROM " + t + " WHERE location IS NOT NULL ORDER BY id LIMIT 4");
  const auto failed = driver.rows("SELECT id FROM " + t + " WHERE dibs_failed_at IS NOT NULL ORDER BY id LIMIT 1");
  if (done.size() < 4 || failed.empty()) throw std::runtime_error("chaos: too few finished rows to break on purpose");
  // Rows are reopened as if never written, then written the way a broken store would let them be.
  auto reopen = [&](sql_session& as, const std::string& id, const std::string& holder, const std::string& token,
                    const std::string& until) {
    driver.execute("DELETE FROM " + a + " WHERE id = " + id);
    as.execute("UPDATE " + t + " SET location = NULL, dibs_failed_at = NULL, dibs_lock_by = '" + holder + "', dibs_lock_token = " + token +
               ", dibs_lock_until = " + until + " WHERE id = " + id);
  };
  const std::string release = "dibs_lock_by = NULL, dibs_lock_token = NULL, dibs_lock_until = NULL";
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
  p5.execute("UPDATE " + t + " SET dibs_failed_at = NOW(6), " + release + " WHERE id = " + *failed[0][0]);
}

void check_mysql(const sql_check_input& in, int round, tally& t) {
  sql_session s(in.uri, ::getpid());
  const query_number number = [&](const std::string& sql) { return s.number(sql); };
  check_audit(number, in, holder_pid, round, t);
  // InnoDB shows a transaction's start from a cache: it may miss a short one.
  t.unknown_trx_start +=
      number("SELECT COUNT(*) FROM " + first_writes(audit_of(in.table)) + " WHERE a.kind = 'done' AND a.trx_started IS NULL");
  outcome_judge judge(in, store_kind::mariadb, round);
  std::uint64_t wrong_answer = 0;
  for (const auto& r : s.rows("SELECT originatingIp, location, dibs_failed_at IS NOT NULL, dibs_error FROM " + in.table)) {
    const auto e = judge.judge(r[0].value_or(""), r[1].has_value(), r[2] && *r[2] == "1", r[3].value_or(""));
    if (r[1] && e.done && *r[1] != e.answer) ++wrong_answer;
  }
  judge.report(t, wrong_answer);
  count_outcomes(number, in.table, t);
}

}  // namespace dibs::chaos
