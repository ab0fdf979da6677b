// PostgreSQL, as the conformance cases (tests/conformance/) see it: tables of the test database,
// dibs's pg_store on them, and what differs in its SQL and in dibs's messages about it.
#include "postgres/pg_env.hpp"
#include "support/database_dump.hpp"
#include "support/sql_backend.hpp"

#include <adapters/postgres/pg_store.hpp>

namespace dibs::test {

const backend& this_backend() {
  static const backend b = sql_backend<pg::pg_store, pg::pg_options>(
      "PostgreSQL", [] { return postgres_base_uri(); }, nullptr,
      sql_spelling{
          "\"originatingIp\"",
          "now() - interval '30 seconds'",
          "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '",
          "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '",
          "(id BIGSERIAL PRIMARY KEY, ip VARCHAR(64), name TEXT)",
          "(id bigserial PRIMARY KEY, ip text NOT NULL, geo jsonb NULL)",
          "geo->>'query' = ip",
          "t",
          [](const std::string& column) { return column + "::text"; },
          [](const std::string& column, const std::string& field) { return column + "->>'" + field + "'"; },
          // a missing query counts
          "location IS NOT NULL AND (location::jsonb)->>'query' IS DISTINCT FROM \"originatingIp\"",
          "stored_at - interval '2 hours'",
          [](const std::string& table, const std::string& values) {
            return "INSERT INTO " + table + " VALUES " + values + " ON CONFLICT DO NOTHING";
          },
          [](const std::string& table, const std::string& comment) {
            return "COMMENT ON TABLE " + table + " IS '" + comment + "'";
          },
          [](const std::string& table) { return "SELECT obj_description('" + table + "'::regclass, 'pg_class')"; },
          {"SELECT coalesce(string_agg(relname, ',' ORDER BY relname), '') FROM pg_class WHERE relname LIKE "
           "'dibs\\_bench\\_%' AND relnamespace = to_regnamespace(current_schema())::oid",
           "SELECT coalesce(string_agg(proname, ',' ORDER BY proname), '') FROM pg_proc WHERE proname LIKE 'dibs\\_bench\\_%'"},
          [](const std::string& table) { return "(parent BIGINT NOT NULL REFERENCES " + table + " (id))"; },
          "violates foreign key constraint",
          [](const std::string& table) {
            return std::vector<std::string>{
                "CREATE FUNCTION " + table + "_broken() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO " + table +
                    "_nowhere VALUES (1); RETURN OLD; END $$",
                "CREATE TRIGGER " + table + "_broken BEFORE DELETE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " + table +
                    "_broken()"};
          },
          // RAISE for that row's answer or delete.
          [](const std::string& table, const std::string& id) {
            const auto f = table + "_refuse" + id;
            return std::vector<std::string>{
                "CREATE FUNCTION " + f + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF (TG_OP = 'DELETE' AND OLD.id = " +
                    id + ") OR (TG_OP = 'UPDATE' AND NEW.id = " + id + " AND NEW.location IS NOT NULL) THEN RAISE EXCEPTION "
                    "'no answer for " + id + "'; END IF; IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $$",
                "CREATE TRIGGER " + f + " BEFORE UPDATE OR DELETE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " + f + "()"};
          },
          "JSONB",
          // As dibs made a table before its columns bore its prefix.
          [](const std::string& t) {
            return std::vector<std::string>{
                "CREATE TABLE " + t + " (id BIGSERIAL PRIMARY KEY, ip VARCHAR(255) NULL, geo JSONB NULL, lock_by VARCHAR(128) "
                "NULL, lock_token BIGINT NULL, lock_until TIMESTAMPTZ NULL, attempts INT NOT NULL DEFAULT 0, error TEXT NULL, "
                "http_status INT NULL, failed_at TIMESTAMPTZ NULL)",
                "CREATE INDEX " + t + "_dibs_open ON " + t + " (lock_until NULLS FIRST, id) WHERE geo IS NULL AND failed_at IS NULL"};
          },
          [](const std::string& t) { return "SELECT indexdef FROM pg_indexes WHERE indexname = '" + t + "_dibs_open'"; },
      },
      backend_facts{
          "table",
          "in database ",
          [](const std::string& table) {
            return "(geo, dibs_lock_by, dibs_lock_token, dibs_lock_until, dibs_attempts, dibs_error, dibs_http_status, dibs_failed_at, index " + table +
                   "_dibs_open)";
          },
          " or run: ",
          [](const std::string& table) { return "ALTER TABLE \"" + table + "\" ADD COLUMN \"geo\" JSONB NULL"; },
          11,  // 3 of the user's, 8 of dibs's
      },
      poison_facts{
          [](const std::string& table) {
            return std::vector<std::string>{
                "ALTER TABLE " + table + " ALTER COLUMN dibs_error TYPE VARCHAR(300)",
                "ALTER TABLE " + table + " ADD CONSTRAINT " + table + "_policy CHECK (NOT (location ? 'refuse'))",
                "CREATE FUNCTION " + table + "_guard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.location ? "
                    "'trigger' THEN RAISE EXCEPTION 'refused by the trigger'; END IF; RETURN NEW; END $$",
                "CREATE TRIGGER " + table + "_guard BEFORE UPDATE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " + table +
                    "_guard()"};
          },
          [](const std::string& table) {
            const std::string policy = "the store refused the answer: new row for relation \"" + table +
                                       "\" violates check constraint \"" + table + "_policy\" (SQLSTATE 23514)";
            return std::vector<poison_row>{
                {42, "refuse", policy},
                {201, "refuse", policy},
                {77, "trigger", "the store refused the answer: refused by the trigger (SQLSTATE P0001)"},
                {130, "nul", "the store refused the answer: unsupported Unicode escape sequence (SQLSTATE 22P05)", true},
                {99, "longfail", "the API has no data: mmmm", true},
                {260, "longfail", "the API has no data: mmmm", true}};
          },
          300,
      });
  return b;
}

std::string everything_in_database() { return postgres_dump(postgres_base_uri()); }

}  // namespace dibs::test
