// `--reuse-answers store` on a SQL store: answers kept in dibs_answers serve the next run, each row
// its own address's, and age by the server's clock (support/stored_answers_case.hpp).
#include "support/backend.hpp"
#include "support/stored_answers_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

BACKEND_TEST_CASE("the next dibs enrich takes the kept answers and asks the API nothing", "[reuse][stored-answers]") {
  const auto& db = test::this_backend();
  auto s = db.open(db.unique_name("kept"));
  test::check_answers_kept_in_store({
      s.where,
      // Made again by the first run, as a first run makes it.
      [&] { s.execute("DROP TABLE IF EXISTS dibs_answers"); },
      [&] { s.execute("UPDATE dibs_answers SET stored_at = " + db.sql_of().answers_older); },
      [&] {
        return std::stol(
            s.query_value("SELECT COUNT(*) FROM " + s.name + " WHERE " + db.sql_of().misplaced_answer).value_or("-1"));
      },
  });
}
