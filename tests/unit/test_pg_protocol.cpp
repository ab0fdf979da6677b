// The PostgreSQL protocol pieces, read without a server: the SQL of each operation, how values
// travel (parameters, array literals), connection strings, and what the server's SQLSTATE means.
#include <adapters/postgres/pg_failover.hpp>
#include <adapters/postgres/pg_protocol.hpp>
#include <adapters/postgres/pg_rights_probe.hpp>
#include <adapters/postgres/pg_tls.hpp>
#include "engine/src/reason_text.hpp"

#include <catch2/catch.hpp>

using namespace dibs::pg;

TEST_CASE("a PostgreSQL claim is one statement: lock open rows with SKIP LOCKED, set the lease by the server's clock",
          "[pg][unit]") {
  table_names n;
  const auto s = claim(n, 100, "w-1", 99, 60'000'000, 1'000'000);
  CHECK(s.sql ==
        "WITH picked AS MATERIALIZED (SELECT \"id\" FROM \"jobs\" WHERE \"location\" IS NULL AND \"dibs_failed_at\" IS NULL AND "
        "(\"dibs_lock_until\" IS NULL OR \"dibs_lock_until\" < now()) AND (\"dibs_lock_until\" IS NULL OR "
        "\"dibs_lock_until\" < now() - ($4::bigint * interval '1 microsecond') OR \"dibs_lock_token\" = 0) ORDER BY "
        "\"dibs_lock_until\" NULLS FIRST LIMIT $5::bigint FOR UPDATE SKIP LOCKED) UPDATE \"jobs\" AS t SET "
        "\"dibs_lock_by\" = $1, \"dibs_lock_token\" = $2::bigint, \"dibs_lock_until\" = now() + ($3::bigint * interval '1 microsecond'), "
        "\"dibs_attempts\" = t.\"dibs_attempts\" + 1 WHERE t.\"id\" = ANY (ARRAY(SELECT \"id\" FROM picked)) RETURNING t.\"id\"::text, "
        "t.\"originatingIp\", t.\"dibs_attempts\", (extract(epoch from t.\"dibs_lock_until\") * 1000000)::bigint");
  // The worker's name is a parameter, never SQL text.
  REQUIRE(s.params.size() == 5);
  CHECK(s.params[0] == "w-1");
  CHECK(s.params[1] == "99");
  CHECK(s.params[2] == "60000000");
  CHECK(s.params[3] == "1000000");
  CHECK(s.params[4] == "100");
}

TEST_CASE("a PostgreSQL claim with max_attempts fails the rows it picked that were claimed that often, in the same statement",
          "[pg][unit]") {
  table_names n;
  const auto s = claim(n, 100, "w-1", 99, 60'000'000, 1'000'000, 3);
  // One statement: the rows picked are split by their attempts before this claim.
  CHECK(s.sql.find("WITH picked AS MATERIALIZED (SELECT \"id\", \"dibs_attempts\" AS d_attempts FROM") == 0);
  CHECK(s.sql.find(", spent AS (UPDATE \"jobs\" AS f SET \"dibs_failed_at\" = now(), \"dibs_error\" = $7::text || f.\"dibs_attempts\" || $8::text") !=
        std::string::npos);
  CHECK(s.sql.find("WHERE f.\"id\" = ANY (ARRAY(SELECT \"id\" FROM picked WHERE d_attempts >= $6::int)))") != std::string::npos);
  CHECK(s.sql.find("WHERE t.\"id\" = ANY (ARRAY(SELECT \"id\" FROM picked WHERE d_attempts < $6::int)) RETURNING") !=
        std::string::npos);
  REQUIRE(s.params.size() == 8);
  CHECK(s.params[5] == "3");
  // The reason reads as every other store's: "gave up after N attempts: ...".
  CHECK(s.params[6].value_or("") + "3" + s.params[7].value_or("") == dibs::exhausted_attempts_reason(3));
}

TEST_CASE("PostgreSQL fenced writes match id, by and token in one statement per batch", "[pg][unit]") {
  table_names n;
  const std::vector<fenced_ref> refs{{"3", "w", 7}, {"5", "w\"x", 8}};
  const auto c = complete_rows(n, refs, {"{\"a\":1}", "{}"});
  CHECK(c.sql ==
        "UPDATE \"jobs\" AS t SET \"location\" = v.d_answer::jsonb, \"dibs_lock_by\" = NULL, \"dibs_lock_token\" = NULL, "
        "\"dibs_lock_until\" = NULL, \"dibs_error\" = NULL FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS "
        "v(d_id, d_by, d_token, d_answer) WHERE t.\"id\" = v.d_id::bigint AND t.\"dibs_lock_by\" = v.d_by AND t.\"dibs_lock_token\" = "
        "v.d_token AND t.\"dibs_lock_until\" >= now() RETURNING v.d_id");
  REQUIRE(c.params.size() == 4);
  CHECK(c.params[0] == "{\"3\",\"5\"}");
  CHECK(c.params[1] == "{\"w\",\"w\\\"x\"}");
  CHECK(c.params[2] == "{7,8}");
  CHECK(c.params[3] == "{\"{\\\"a\\\":1}\",\"{}\"}");

  const auto d = delete_rows(n, refs);
  CHECK_THAT(d.sql, Catch::StartsWith("DELETE FROM \"jobs\" AS t USING unnest($1::text[], $2::text[], $3::bigint[])"));
  CHECK_THAT(d.sql, Catch::EndsWith("AND t.\"dibs_lock_until\" >= now() RETURNING v.d_id"));

  // Renewal, release and failure need the lease held, not live (a late write is the completion's concern).
  const auto r = renew_rows(n, refs, 30'000'000);
  CHECK_THAT(r.sql, Catch::Contains("SET \"dibs_lock_until\" = now() + ($4::bigint * interval '1 microsecond')"));
  CHECK_THAT(r.sql, !Catch::Contains(">= now()"));
  CHECK(r.params.at(3) == "30000000");

  const auto rel = release_rows(n, refs, {0, 2'000'000}, {"shutdown", "HTTP 503"}, {1, 0});
  CHECK_THAT(rel.sql, Catch::Contains("\"dibs_lock_token\" = CASE WHEN v.d_delay > 0 THEN 0 END"));
  CHECK_THAT(rel.sql, Catch::Contains("\"dibs_lock_until\" = CASE WHEN v.d_delay > 0 THEN now() + (v.d_delay::bigint * interval "
                                      "'1 microsecond') END, \"dibs_attempts\" = GREATEST(t.\"dibs_attempts\" - v.d_back, 0), "
                                      "\"dibs_error\" = v.d_why"));
  CHECK_THAT(rel.sql, !Catch::Contains(">= now()"));
  CHECK(rel.params.at(3) == "{0,2000000}");
  CHECK(rel.params.at(4) == "{\"shutdown\",\"HTTP 503\"}");
  CHECK(rel.params.at(5) == "{1,0}");  // the first one's claim gave back (release_item::not_attempted)

  const auto f = fail_rows(n, refs, {"HTTP 404", "bad"}, {404, 0});
  CHECK_THAT(f.sql, Catch::Contains("SET \"dibs_failed_at\" = now(), \"dibs_error\" = v.d_reason, \"dibs_http_status\" = v.d_status, "
                                    "\"dibs_lock_by\" = NULL, \"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL"));
  CHECK(f.params.at(4) == "{404,0}");
  for (const auto* s : {&c, &d, &r, &rel, &f})
    CHECK_THAT(s->sql, Catch::Contains("t.\"id\" = v.d_id::bigint AND t.\"dibs_lock_by\" = v.d_by AND t.\"dibs_lock_token\" = v.d_token"));
  // The user's own key: its column, its type for the cast, its text for the id.
  const table_names people{"people", "ip", "geo", row_key{"code", "uuid", 0}};
  CHECK_THAT(complete_rows(people, refs, {"{}", "{}"}).sql, Catch::Contains("t.\"code\" = v.d_id::uuid AND "));
  CHECK_THAT(claim(people, 1, "w", 1, 1, 1).sql, Catch::Contains("RETURNING t.\"code\"::text, t.\"ip\""));
}

TEST_CASE("the PostgreSQL table keeps the lease columns and a partial index on the open rows", "[pg][unit]") {
  table_names n{"geo_jobs", "ip", "geo"};
  const auto ddl = create_table(n);
  CHECK_THAT(ddl, Catch::Contains("CREATE TABLE IF NOT EXISTS \"geo_jobs\""));
  CHECK_THAT(ddl, Catch::Contains("\"ip\" VARCHAR(255) NULL"));
  CHECK_THAT(ddl, Catch::Contains("\"geo\" JSONB NULL"));
  for (const char* col : {"\"dibs_lock_by\" VARCHAR(128) NULL", "\"dibs_lock_token\" BIGINT NULL", "\"dibs_lock_until\" TIMESTAMPTZ NULL",
                          "\"dibs_attempts\" INT NOT NULL DEFAULT 0", "\"dibs_error\" TEXT NULL", "\"dibs_http_status\" INT NULL",
                          "\"dibs_failed_at\" TIMESTAMPTZ NULL"})
    CHECK_THAT(ddl, Catch::Contains(col));
  CHECK(create_index(n) ==
        "CREATE INDEX IF NOT EXISTS \"geo_jobs_dibs_open\" ON \"geo_jobs\" (\"dibs_lock_until\" NULLS FIRST, \"id\") WHERE "
        "\"geo\" IS NULL AND \"dibs_failed_at\" IS NULL");
  // The claim's condition implies the index's predicate, so the planner can use it.
  CHECK_THAT(claimable_condition(n, "$4"), Catch::StartsWith("\"geo\" IS NULL AND \"dibs_failed_at\" IS NULL AND "));
  CHECK_THROWS_WITH(check_names({"jobs\"; DROP TABLE x", "a", "b"}), Catch::Contains("bad SQL name"));
  CHECK_THROWS_WITH(check_names({"jobs", "a", "a"}), Catch::Contains("must be different"));
  CHECK_THROWS_WITH(check_names({"jobs", "ip", "dibs_lock_token"}), Catch::Contains("keeps its lease"));
  CHECK_THROWS_WITH(check_names({std::string(51, 'a'), "ip", "geo"}), Catch::Contains("bad SQL name"));
}

TEST_CASE("PostgreSQL --follow's channel: LISTEN on dibs_<table>, announced once per INSERT statement, never by dibs's own writes",
          "[pg][unit]") {
  table_names n{"geo_jobs", "ip", "geo"};
  CHECK(notify_channel(n) == "dibs_geo_jobs");
  CHECK(listen(n) == "LISTEN \"dibs_geo_jobs\"");
  const auto ddl = create_notify_trigger(n);
  CHECK_THAT(ddl, Catch::Contains("pg_notify('dibs_geo_jobs', '')"));
  CHECK_THAT(ddl, Catch::Contains("AFTER INSERT ON \"geo_jobs\" FOR EACH STATEMENT"));
  CHECK_THAT(ddl, !Catch::Contains("UPDATE"));  // claims and completions are updates: they must not wake anyone
  CHECK_THAT(ddl, Catch::Contains("IF NOT EXISTS (SELECT 1 FROM pg_trigger"));  // never DROP TRIGGER's exclusive lock
}

TEST_CASE("text array literals quote every element, so no value reads as NULL or breaks out", "[pg][unit]") {
  CHECK(text_array({}) == "{}");
  CHECK(text_array({"NULL", ""}) == "{\"NULL\",\"\"}");
  CHECK(text_array({"a,b", "}{", "back\\slash"}) == "{\"a,b\",\"}{\",\"back\\\\slash\"}");
  CHECK(int_array(std::vector<long>{-1, 2}) == "{-1,2}");
}

TEST_CASE("postgresql:// URIs: the table is ours, the rest is libpq's", "[pg][unit]") {
  auto t = parse_pg_uri("postgresql://app:p%40ss@db.local:5433/enrich?table=geo_jobs&sslmode=verify-full");
  CHECK(t.table == "geo_jobs");
  CHECK(t.conninfo == "postgresql://app:p%40ss@db.local:5433/enrich?sslmode=verify-full");
  auto d = parse_pg_uri("postgres://u@h/db");
  CHECK(d.table == "jobs");
  CHECK(d.conninfo == "postgres://u@h/db");
  CHECK(parse_pg_uri("postgresql://u@h/db?sslmode=disable&table=t").conninfo == "postgresql://u@h/db?sslmode=disable");
  CHECK_THROWS_AS(parse_pg_uri("mysql://u@h/db"), std::invalid_argument);
  CHECK_THROWS_WITH(parse_pg_uri("postgresql://u@h/db?table="), Catch::Contains("empty table"));
}

TEST_CASE("PostgreSQL refusals of content are told apart from outages by SQLSTATE", "[pg][unit]") {
  // Value too long, invalid JSON, untranslatable character (\u0000 in jsonb), invalid text,
  // check constraint, not null, unique, foreign key, a trigger's RAISE, an assertion, a row too
  // big or JSON too deep (stack depth).
  for (const char* s : {"22001", "22P02", "22P05", "22021", "23514", "23502", "23505", "23503", "P0001", "P0004", "54000",
                        "54001"})
    CHECK(refuses_content(s));
  // Connection failures, admin shutdown, deadlock, serialization, undefined table/column,
  // permission denied, disk full, out of memory, too many connections, no SQLSTATE at all.
  for (const char* s : {"08006", "08001", "57P01", "40P01", "40001", "42P01", "42703", "42501", "53100", "53200", "53300", ""})
    CHECK_FALSE(refuses_content(s));
  CHECK(connection_lost("08006"));
  CHECK(connection_lost("57P01"));
  CHECK(connection_lost(""));
  CHECK_FALSE(connection_lost("23514"));
  CHECK_FALSE(connection_lost("42P01"));
  CHECK(retry_statement("40P01"));
  CHECK(retry_statement("40001"));
  CHECK_FALSE(retry_statement("23505"));
}

TEST_CASE("a PostgreSQL user without a right ends the run, and a statement timeout or a broken trigger is an outage",
          "[pg][unit]") {
  CHECK(classify("42501") == error_class::denied);
  for (const char* s : {"57014", "42P01", "53300", "XX000"}) CHECK(classify(s) == error_class::other);
  CHECK(classify("23503") == error_class::row_refused);  // a foreign key points at a row being deleted
  // The right a refused statement needed, by what it does.
  CHECK(statement_right("UPDATE \"jobs\" AS t SET") == "UPDATE");
  CHECK(statement_right("WITH picked AS MATERIALIZED (SELECT") == "UPDATE");  // the claim
  CHECK(statement_right("DELETE FROM \"jobs\"") == "DELETE");
  CHECK(statement_right("SELECT count(*)") == "SELECT");
  CHECK(statement_right("LISTEN x").empty());
  // Before a run: no-op statements whose rights the server checks, and the GRANT to run.
  const table_names n{"jobs", "ip", "geo", row_key{"code", "uuid", 0}};
  const auto probes = rights_probes(n, true);
  REQUIRE(probes.size() == 3);
  CHECK(probes[0].sql == "SELECT \"code\", \"ip\", \"geo\", \"dibs_lock_by\", \"dibs_lock_token\", \"dibs_lock_until\", \"dibs_attempts\", "
                         "\"dibs_error\", \"dibs_http_status\", \"dibs_failed_at\" FROM \"jobs\" LIMIT 0");
  CHECK(probes[1].right == "UPDATE");
  CHECK_THAT(probes[1].sql, Catch::StartsWith("UPDATE \"jobs\" SET \"geo\" = \"geo\", \"dibs_lock_by\" = \"dibs_lock_by\""));
  CHECK_THAT(probes[1].sql, Catch::EndsWith(" WHERE FALSE"));
  CHECK(probes[2].sql == "DELETE FROM \"jobs\" WHERE FALSE");
  CHECK(rights_probes(n, false).size() == 2);
  CHECK(grant_statement(n, "app \"ro\"", false) == "GRANT SELECT, UPDATE ON \"jobs\" TO \"app \"\"ro\"\"\"");
}

TEST_CASE("the unwritten ids are named in order, as they were sent", "[pg][unit]") {
  const std::vector<fenced_ref> refs{{"1", "w", 1}, {"2", "w", 1}, {"3", "w", 1}};
  CHECK(lost_ids(refs, {"3", "1"}) == std::vector<std::string>{"2"});
  CHECK(lost_ids(refs, {}) == std::vector<std::string>{"1", "2", "3"});
}

TEST_CASE("a remote PostgreSQL server is reached with a checked certificate unless the URI says otherwise",
          "[pg][unit][tls]") {
  const tls_environment none;
  CHECK(with_tls_default("postgresql://app:pw@db.example.com:5432/enrich", none) ==
        "postgresql://app:pw@db.example.com:5432/enrich?sslmode=verify-full&sslrootcert=/etc/ssl/certs/ca-certificates.crt");
  CHECK(with_tls_default("postgresql://app@db.example.com/enrich?application_name=x", none) ==
        "postgresql://app@db.example.com/enrich?application_name=x&sslmode=verify-full&sslrootcert=/etc/ssl/certs/"
        "ca-certificates.crt");
  // The user's own choices stand.
  CHECK(with_tls_default("postgresql://db.example.com/e?sslmode=disable", none) == "postgresql://db.example.com/e?sslmode=disable");
  CHECK(with_tls_default("postgresql://db.example.com/e?sslrootcert=/ca.pem", none) ==
        "postgresql://db.example.com/e?sslrootcert=/ca.pem&sslmode=verify-full");
  CHECK(with_tls_default("postgresql://db.example.com/e", tls_environment{true, false}) == "postgresql://db.example.com/e");
  CHECK(with_tls_default("postgresql://db.example.com/e", tls_environment{false, true}) ==
        "postgresql://db.example.com/e?sslmode=verify-full");
  // Loopback and Unix sockets keep libpq's default: that traffic never leaves the machine.
  for (const char* local : {"postgresql://postgres@127.0.0.1:5432/dibs_test", "postgres://u:p@localhost/db",
                            "postgresql://u@[::1]:5433/db", "postgresql:///db", "postgresql://%2Fvar%2Frun%2Fpostgresql/db",
                            "postgresql://u@127.0.0.1/db?host=/tmp"})
    CHECK(with_tls_default(local, none) == local);
  // Any remote host among several, or in host=, makes it remote; a password holding '@' or '/' is no host.
  CHECK(uri_hosts("postgresql://u:p@ss/w@h1:5432,[::1]:5433/db?host=h3") == std::vector<std::string>{"h1", "::1", "h3"});
  CHECK(with_tls_default("postgresql://u@127.0.0.1/db?host=db.example.com", none) != "postgresql://u@127.0.0.1/db?host=db.example.com");
  CHECK_FALSE(is_local_host("127.example.com"));
  CHECK_FALSE(is_local_host("10.0.0.1"));
  CHECK(is_local_host("127.1.2.3"));
}

TEST_CASE("a PostgreSQL server that turned read-only (a demoted primary, a standby) is a lost link: reconnect to the primary",
          "[pg][unit][failover]") {
  // 25006 read_only_sql_transaction: the session is on a server that takes no writes (any more).
  // Kept, the connection would fail every claim and write for ever; dropped, libpq's
  // target_session_attrs=read-write finds the server that takes them.
  CHECK(classify("25006") == error_class::link_lost);
  CHECK(connection_lost("25006"));
  CHECK(classify("25001") == error_class::other);  // another invalid transaction state is no lost link
}

TEST_CASE("a PostgreSQL URI naming several hosts connects to the read-write one unless it says otherwise",
          "[pg][unit][failover]") {
  CHECK(with_read_write_target("postgresql://u@h1:5432,h2:5433/db") ==
        "postgresql://u@h1:5432,h2:5433/db?target_session_attrs=read-write");
  CHECK(with_read_write_target("postgresql://u@h1,h2/db?sslmode=require") ==
        "postgresql://u@h1,h2/db?sslmode=require&target_session_attrs=read-write");
  CHECK(with_read_write_target("postgresql:///db?host=/run/a,/run/b") ==
        "postgresql:///db?host=/run/a,/run/b&target_session_attrs=read-write");
  // The user's own choice stands (e.g. primary, or prefer-standby for a read-only check).
  CHECK(with_read_write_target("postgresql://h1,h2/db?target_session_attrs=primary") ==
        "postgresql://h1,h2/db?target_session_attrs=primary");
  // One host: nothing to choose between.
  CHECK(with_read_write_target("postgresql://u:p@h1:5432/db") == "postgresql://u:p@h1:5432/db");
  CHECK(with_read_write_target("postgresql://u:p@h1:5432/db?sslmode=disable") == "postgresql://u:p@h1:5432/db?sslmode=disable");
  CHECK(with_read_write_target("postgresql:///db?host=/run/postgresql") == "postgresql:///db?host=/run/postgresql");
}
