// The user's own PostgreSQL table: what it lacks, and the statements that add it (no server).
#include <adapters/postgres/pg_table_schema.hpp>

#include <dibs/missing_table_error.hpp>

#include <catch2/catch.hpp>

using namespace dibs::pg;
using dibs::sql_common::schema_gap;
using dibs::sql_common::table_shape;

namespace {
const std::vector<std::string> pg_columns{"id",       "originatingIp", "location",    "dibs_lock_by",  "dibs_lock_token",
                                           "dibs_lock_until", "dibs_attempts",    "dibs_error", "dibs_http_status", "dibs_failed_at"};

// As pg_store.cpp reads a table: its shape against what dibs needs, and the refusal.
schema_gap find_gap(const table_names& n, const table_shape& shape) {
  return dibs::sql_common::find_gap(n.source, table_needs_of(n), shape);
}
std::string gap_message(const table_names& n, const schema_gap& gap, const std::string& hint) {
  return dibs::sql_common::gap_message(n.table, gap, table_needs_of(n), alter_table(n, gap), hint);
}
}  // namespace

TEST_CASE("a PostgreSQL table created by dibs lacks nothing", "[pg][schema]") {
  table_names n;
  const auto gap = find_gap(n, {pg_columns, {"jobs_pkey", "jobs_dibs_open"}});
  CHECK(gap.complete());
  CHECK(alter_table(n, gap).empty());
}

TEST_CASE("PostgreSQL names are compared exactly (dibs quotes them)", "[pg][schema]") {
  table_names n;
  std::vector<std::string> cols = pg_columns;
  cols[1] = "originatingip";  // what an unquoted originatingIp became
  const auto gap = find_gap(n, {cols, {"jobs_dibs_open"}});
  CHECK(gap.source_missing);
}

TEST_CASE("a user's PostgreSQL table gets every dibs column and the partial claim index", "[pg][schema]") {
  table_names n{"people", "ip", "geo"};
  const auto gap = find_gap(n, {{"person_id", "ip"}, {"people_pkey"}});
  CHECK(gap.columns == std::vector<std::string>{"id", "geo", "dibs_lock_by", "dibs_lock_token", "dibs_lock_until", "dibs_attempts", "dibs_error",
                                                "dibs_http_status", "dibs_failed_at"});
  CHECK(gap.index_missing);
  CHECK(alter_table(n, gap) ==
        "ALTER TABLE \"people\" ADD COLUMN \"id\" BIGSERIAL UNIQUE, ADD COLUMN \"geo\" JSONB NULL, ADD COLUMN \"dibs_lock_by\" "
        "VARCHAR(128) NULL, ADD COLUMN \"dibs_lock_token\" BIGINT NULL, ADD COLUMN \"dibs_lock_until\" TIMESTAMPTZ NULL, ADD COLUMN "
        "\"dibs_attempts\" INT NOT NULL DEFAULT 0, ADD COLUMN \"dibs_error\" TEXT NULL, ADD COLUMN \"dibs_http_status\" INT NULL, ADD "
        "COLUMN \"dibs_failed_at\" TIMESTAMPTZ NULL; " + create_index(n) + ";");
  const auto only_index = find_gap(n, {{"id", "ip", "geo", "dibs_lock_by", "dibs_lock_token", "dibs_lock_until", "dibs_attempts", "dibs_error",
                                        "dibs_http_status", "dibs_failed_at"}, {}});
  CHECK(alter_table(n, only_index) == create_index(n) + ";");
}

TEST_CASE("the PostgreSQL refusal names the missing columns, the statements and dibs init", "[pg][schema]") {
  table_names n{"people", "ip", "geo"};
  const auto gap = find_gap(n, {{"id", "ip", "geo"}, {}});
  const auto said = gap_message(n, gap, "dibs init --store 'x'");
  CHECK_THAT(said, Catch::Contains("table people lacks what dibs keeps its claims in (dibs_lock_by, dibs_lock_token, dibs_lock_until, dibs_attempts, "
                                   "dibs_error, dibs_http_status, dibs_failed_at, index people_dibs_open)"));
  CHECK_THAT(said, Catch::Contains("add it with: ALTER TABLE \"people\" ADD COLUMN \"dibs_lock_by\" VARCHAR(128) NULL"));
  CHECK_THAT(said, Catch::EndsWith(" or run: dibs init --store 'x'"));
  table_names other{"people", "addr", "geo"};
  CHECK(find_gap(other, {{"id", "ip"}, {}}).source_missing);
  CHECK(std::string(dibs::missing_table_error::source_column(other.source, other.table, {"id", "ip"}).what()) ==
        "no column 'addr' in table people (its columns: id, ip)");
}
