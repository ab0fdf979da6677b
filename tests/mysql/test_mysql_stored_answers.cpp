// `--reuse-answers store` on MariaDB: answers kept in dibs_answers serve the next run
// (support/stored_answers_case.hpp).
#include "support/mysql_env.hpp"
#include "support/stored_answers_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("the next dibs enrich takes MariaDB's kept answers and asks the API nothing", "[mysql][reuse][stored-answers]") {
  test::check_answers_kept_in_store({"--store", test::mysql_uri_for(test::unique_table("kept"))});
}
