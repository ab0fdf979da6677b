// A SQL store refusing writes, through the real dibs (support/sql_refusal_case.hpp): a row a
// foreign key points at fails alone with the server's reason while its batch is deleted, and a
// store that refuses for an unknown reason is written to at the backoff's pace.
#include "support/backend.hpp"
#include "support/sql_refusal_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
const test::backend& backend = test::this_backend();
}  // namespace

BACKEND_TEST_CASE("a row a foreign key points at fails alone with --on-done delete, and its batch is deleted",
                  "[refusals]") {
  const auto db = backend.dialect();
  const auto table = backend.unique_name("fk_parent");
  const auto child = table + "_child";
  test::check_referenced_row_fails_alone(
      db, table,
      [&](const std::string& id) {
        db.execute("CREATE TABLE " + child + " " + backend.sql_of().child_columns(table));
        db.execute("INSERT INTO " + child + " VALUES (" + id + ")");
      },
      backend.sql_of().foreign_key_refusal);
  db.execute("DROP TABLE " + child);
  db.execute("DROP TABLE " + table);
}

BACKEND_TEST_CASE("a store that refuses every write for an unknown reason is written to at the backoff's pace",
                  "[refusals]") {
  const auto db = backend.dialect();
  const auto table = backend.unique_name("broken");
  test::check_refusing_store_paced(db, table, [&] {
    for (const auto& statement : backend.sql_of().break_deletes(table)) db.execute(statement);
  });
  db.execute("DROP TABLE " + table);
}
