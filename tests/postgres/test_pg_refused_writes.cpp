// PostgreSQL refusing writes, through the real dibs (tests/support/sql_refusal_case.hpp): a row a
// foreign key points at fails alone with the server's reason while its batch is deleted, and a
// store that refuses for an unknown reason is written to at the backoff's pace.
#include "postgres/pg_cases.hpp"
#include "support/sql_refusal_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
const auto db = test::postgres_dialect();
}  // namespace

TEST_CASE("a PostgreSQL row a foreign key points at fails alone with --on-done delete, and its batch is deleted",
          "[postgres][refusals]") {
  const auto table = test::unique_pg_table("fk_parent");
  const auto child = table + "_child";
  test::check_referenced_row_fails_alone(
      db, table,
      [&](const std::string& id) {
        db.execute("CREATE TABLE " + child + " (parent BIGINT NOT NULL REFERENCES " + table + " (id))");
        db.execute("INSERT INTO " + child + " VALUES (" + id + ")");
      },
      "violates foreign key constraint");
  db.execute("DROP TABLE " + child + ", " + table);
}

TEST_CASE("a PostgreSQL store that refuses every write for an unknown reason is written to at the backoff's pace",
          "[postgres][refusals]") {
  const auto table = test::unique_pg_table("broken");
  test::check_refusing_store_paced(db, table, [&] {
    db.execute("CREATE FUNCTION " + table + "_broken() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO " +
                    table + "_nowhere VALUES (1); RETURN OLD; END $$");
    db.execute("CREATE TRIGGER " + table + "_broken BEFORE DELETE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " +
                    table + "_broken()");
  });
  db.execute("DROP TABLE " + table);
}
