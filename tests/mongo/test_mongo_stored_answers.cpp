// `--reuse-answers store` on MongoDB: answers kept in the collection dibs_answers serve the next
// run (support/stored_answers_case.hpp).
#include "support/mongo_env.hpp"
#include "support/stored_answers_case.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("the next dibs enrich takes MongoDB's kept answers and asks the API nothing", "[mongo][reuse][stored-answers]") {
  test::check_answers_kept_in_store(
      {"--store", test::mongodb_uri(), "--db", "dibs_test", "--collection", test::unique_collection("kept")});
}
