// `--reuse-answers store` on PostgreSQL: answers kept in dibs_answers serve the next run
// (support/stored_answers_case.hpp).
#include "postgres/pg_env.hpp"
#include "support/stored_answers_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("the next dibs enrich takes PostgreSQL's kept answers and asks the API nothing",
          "[postgres][reuse][stored-answers]") {
  test::check_answers_kept_in_store({"--store", test::postgres_uri_for(test::unique_pg_table("kept"))});
}
