// The PostgreSQL checker (sql_checker.hpp): its PL/pgSQL audit trigger, the violations its
// self-test injects, and its answers compared as jsonb.
#include "sql_checker.hpp"

#include "pg_session.hpp"

#include <adapters/postgres/pg_protocol.hpp>

#include <cstdio>
#include <stdexcept>

namespace dibs::chaos {

namespace {
const std::string driver_name = "dibs-chaos-checker";  // no worker's name: its writes have no pid

// The pid in a lease holder's name (engine: <host>-<pid>-<shard>; the host may hold dashes).
constexpr const char* holder_pid = "substring(a.held_by from '-([0-9]+)-[0-9]+$')::bigint";

// One row of the audit, with what every record carries.
std::string record(const std::string& a, const std::string& kind, const std::string& extra_columns,
                   const std::string& extra_values) {
  return "INSERT INTO " + a + " (kind, id, pid, backend, app, held_by, held_token, held_until, trx_started, written_at" +
         extra_columns + ") VALUES (" + kind + ", OLD.id, writer, pg_backend_pid(), app, OLD.dibs_lock_by, OLD.dibs_lock_token, "
         "OLD.dibs_lock_until, transaction_timestamp(), clock_timestamp()" + extra_values + ");";
}
}  // namespace

void install_pg_audit(const sql_check_input& in) {
  pg_session s(in.uri, driver_name);
  const auto& t = in.table;
  const auto a = audit_of(t);
  s.execute("CREATE TABLE " + a + " (seq BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, id BIGINT, pid BIGINT NULL, "
            "backend INT, app TEXT, held_by TEXT NULL, held_token BIGINT NULL, held_until TIMESTAMPTZ NULL, "
            "new_by TEXT NULL, new_token BIGINT NULL, trx_started TIMESTAMPTZ, written_at TIMESTAMPTZ)");
  s.execute("CREATE INDEX " + a + "_by_id ON " + a + " (id, kind)");
  // A BEFORE trigger runs on the row version the statement finally writes (after PostgreSQL
  // re-checks a row another transaction changed meanwhile), and its record commits or rolls back
  // with the write: a statement refused or cut off by a lost connection leaves none.
  s.execute("CREATE FUNCTION " + a + "_record() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
            "DECLARE\n"
            "  app text := current_setting('application_name', true);\n"
            "  writer bigint := substring(app from '^dibs-([0-9]+)$')::bigint;\n"
            "BEGIN\n"
            "  IF TG_OP = 'DELETE' THEN\n    " + record(a, "'delete'", "", "") + "\n    RETURN OLD;\n  END IF;\n"
            "  IF NEW.location IS NOT NULL OR NEW.dibs_failed_at IS NOT NULL THEN\n    " +
            record(a, "CASE WHEN NEW.location IS NOT NULL THEN 'done' ELSE 'fail' END", "", "") + "\n"
            "  ELSIF NEW.dibs_lock_token IS NOT NULL AND NEW.dibs_lock_token IS DISTINCT FROM OLD.dibs_lock_token THEN\n    " +
            record(a, "'claim'", ", new_by, new_token", ", NEW.dibs_lock_by, NEW.dibs_lock_token") + "\n"
            "  END IF;\n  RETURN NEW;\nEND\n$body$");
  s.execute("CREATE TRIGGER " + a + "_writes BEFORE UPDATE OR DELETE ON " + t + " FOR EACH ROW EXECUTE FUNCTION " + a +
            "_record()");
}

void drop_pg_audit(const sql_check_input& in) {
  pg_session s(in.uri, driver_name);
  const auto a = audit_of(in.table);
  s.execute("DROP TRIGGER IF EXISTS " + a + "_writes ON " + in.table);
  s.execute("DROP FUNCTION IF EXISTS " + a + "_record()");
  s.execute("DROP TABLE IF EXISTS " + a);
}

void inject_pg_violations(const sql_check_input& in) {
  const auto& t = in.table;
  const auto a = audit_of(t);
  pg_session driver(in.uri, driver_name);
  const auto done = driver.rows("SELECT id, location::text FROM " + t + " WHERE location IS NOT NULL ORDER BY id LIMIT 4");
  const auto failed = driver.rows("SELECT id FROM " + t + " WHERE dibs_failed_at IS NOT NULL ORDER BY id LIMIT 1");
  if (done.size() < 4 || failed.empty()) throw std::runtime_error("chaos: too few finished rows to break on purpose");
  // Rows are reopened as if never written, then written the way a broken store would let them be.
  auto reopen = [&](pg_session& as, const std::string& id, const std::string& holder, const std::string& token,
                    const std::string& until) {
    driver.execute("DELETE FROM " + a + " WHERE id = " + id);
    as.execute("UPDATE " + t + " SET location = NULL, dibs_failed_at = NULL, dibs_lock_by = '" + holder + "', dibs_lock_token = " + token +
               ", dibs_lock_until = " + until + " WHERE id = " + id);
  };
  auto as = [&](int pid) { return pg_session(in.uri, pg_session::as_process(pid)); };
  const std::string release = "dibs_lock_by = NULL, dibs_lock_token = NULL, dibs_lock_until = NULL";
  // 1. written-twice: a second write of a done row, with the very same answer.
  as(6).execute("UPDATE " + t + " SET location = location WHERE id = " + *done[0][0]);
  // 2. stale-writer: process 1 holds the lease, process 2 writes.
  auto p1 = as(1), p2 = as(2);
  reopen(p1, *done[1][0], "ghost-1-0", "777", "now() + interval '1 hour'");
  p2.execute("UPDATE " + t + " SET location = $1::jsonb, " + release + " WHERE id = " + *done[1][0], {*done[1][1]});
  // 3. lost: a row deleted.
  driver.execute("DELETE FROM " + t + " WHERE id = " + *done[2][0]);
  // 4. expired-lease: the holder writes in a transaction begun an hour after its lease ran out.
  auto p3 = as(3);
  reopen(p3, *done[3][0], "ghost-3-0", "778", "now() - interval '1 hour'");
  p3.execute("UPDATE " + t + " SET location = $1::jsonb, " + release + " WHERE id = " + *done[3][0], {*done[3][1]});
  // 5. stale-fail: process 4 holds the lease, process 5 records the failure.
  auto p4 = as(4), p5 = as(5);
  reopen(p4, *failed[0][0], "ghost-4-0", "779", "now() + interval '1 hour'");
  p5.execute("UPDATE " + t + " SET dibs_failed_at = now(), " + release + " WHERE id = " + *failed[0][0]);
}

void check_pg(const sql_check_input& in, int round, tally& t) {
  pg_session s(in.uri, driver_name);
  const query_number number = [&](const std::string& sql) { return s.number(sql); };
  check_audit(number, in, holder_pid, round, t);
  // Done rows' answers are compared as jsonb, which keeps its own key order and spacing.
  outcome_judge judge(in, store_kind::postgres, round);
  std::vector<std::int64_t> done_ids;
  std::vector<std::string> answers;
  for (const auto& r :
       s.rows("SELECT id, \"originatingIp\", location IS NOT NULL, dibs_failed_at IS NOT NULL, dibs_error FROM " + in.table)) {
    const auto e = judge.judge(r[1].value_or(""), r[2] == "t", r[3] == "t", r[4].value_or(""));
    if (r[2] == "t" && e.done) {
      done_ids.push_back(std::stoll(r[0].value_or("0")));
      answers.push_back(e.answer);
    }
  }
  judge.report(t, s.number("SELECT count(*) FROM unnest($1::bigint[], $2::text[]) AS v(id, answer) JOIN " + in.table +
                               " t ON t.id = v.id WHERE t.location IS DISTINCT FROM v.answer::jsonb",
                           {pg::int_array(done_ids), pg::text_array(answers)}));
  count_outcomes(number, in.table, t);
}

}  // namespace dibs::chaos
