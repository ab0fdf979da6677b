// MariaDB refusing writes, through the real dibs (tests/support/sql_refusal_case.hpp): a row a
// foreign key points at fails alone with the server's reason while its batch is deleted, and a
// store that refuses for an unknown reason is written to at the backoff's pace.
#include "mysql/mysql_cases.hpp"
#include "support/sql_refusal_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
const auto db = test::mariadb_dialect();
}  // namespace

TEST_CASE("a MariaDB row a foreign key points at fails alone with --on-done delete, and its batch is deleted",
          "[mysql][refusals]") {
  const auto table = test::unique_table("fk_parent");
  const auto child = table + "_child";
  test::check_referenced_row_fails_alone(
      db, table,
      [&](const std::string& id) {
        db.execute("CREATE TABLE " + child + " (parent BIGINT UNSIGNED NOT NULL, FOREIGN KEY (parent) REFERENCES " +
                        table + " (id)) ENGINE=InnoDB");
        db.execute("INSERT INTO " + child + " VALUES (" + id + ")");
      },
      "Cannot delete or update a parent row: a foreign key constraint fails");
  db.execute("DROP TABLE " + child);
  db.execute("DROP TABLE " + table);
}

TEST_CASE("a MariaDB store that refuses every write for an unknown reason is written to at the backoff's pace",
          "[mysql][refusals]") {
  const auto table = test::unique_table("broken");
  test::check_refusing_store_paced(db, table, [&] {
    db.execute("CREATE TRIGGER " + table + "_broken BEFORE DELETE ON " + table + " FOR EACH ROW INSERT INTO " + table +
                    "_nowhere VALUES (1)");
  });
  db.execute("DROP TABLE " + table);
}
