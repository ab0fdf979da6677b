// `dibs enrich --store postgresql://...` refused before a row is claimed: a mistyped {field} (quoted
// names are exact in PostgreSQL) and a closed API port. (The run to the end: conformance/sql_enrich.cpp.)
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("PostgreSQL: a mistyped {field} or a closed API port is refused before a row is claimed", "[postgres][enrich][preflight]") {
  auto s = test::this_backend().fresh("preflight");
  const auto& table = s.name;
  const auto& uri = s.uri();
  REQUIRE(s.seed(10, 3) == 10);
  auto untouched = [&] {
    return s.query_value("SELECT count(*) FROM " + table +
                         " WHERE dibs_lock_token IS NULL AND dibs_attempts = 0 AND dibs_failed_at IS NULL AND location IS NULL") ==
           std::optional<std::string>("10");
  };
  std::string out;
  // Quoted names are exact in PostgreSQL: the column is "originatingIp", not originatingip.
  test::child_process typo({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", "http://127.0.0.1:1/json/{originatingip}",
                            "--no-progress"},
                           true);
  CHECK(typo.finish(out) == 2);
  CHECK_THAT(out, Catch::Contains("--url reads the field 'originatingip', but table " + table + " has no such column") &&
                      Catch::Contains("did you mean 'originatingIp'?") &&
                      Catch::Contains("(its columns: id, originatingIp, location"));
  CHECK(untouched());

  out.clear();
  test::child_process closed({dibs::test::dibs_binary(), "enrich", "--store", uri, "--url", "http://127.0.0.1:1/json/{originatingIp}",
                              "--no-progress"},
                             true);
  CHECK(closed.finish(out) == 2);
  CHECK_THAT(out, Catch::Contains("the API can't be used: --url http://127.0.0.1:1/json/") &&
                      Catch::Contains("Connection refused"));
  CHECK(untouched());
}
