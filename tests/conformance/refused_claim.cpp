// A claim the store refuses for what it writes is a finding, not a loop, on every store: a table
// whose CHECK constraint refuses dibs's attempt count (MongoDB: a validator refusing every
// lease) ends `dibs enrich` within seconds, exit 2, one line with the server's words; nothing is
// leased and no item is charged (before, the claim was tried again every second, forever).
#include "support/backend.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

BACKEND_TEST_CASE("a claim the store refuses for what it writes ends the run at once with one line, exit 2",
                  "[own-table][refused-claim]") {
  const auto& db = test::this_backend();
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = db.fresh("claim_refused");
  REQUIRE(s.seed(20, 7) == 20);
  if (db.sql) {
    s.execute("ALTER TABLE " + s.name + " ADD CONSTRAINT " + s.name + "_no_claims CHECK (dibs_attempts < 1)");
  } else {
    s.command("{\"dibsRefuse\": \"" + s.name + "\", \"when\": {\"_dibs.token\": {\"$exists\": true}}}");
  }
  auto args = db.where_for(s.name);
  args.insert(args.begin(), "enrich");
  args.insert(args.end(), {"--url", api.base_url() + "/json/{originatingIp}", "--no-progress"});
  const auto [rc, out] = test::run_dibs_within(std::chrono::seconds(60), args);
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("dibs: error: the store refuses the run's claims: ") && Catch::Contains("no retry can help"));
  CHECK_THAT(out, !Catch::Contains("claim failed (retrying"));
  CHECK(api.requests() <= 1);  // the pre-flight's, at most: no item was charged
  const auto st = s.stats_blocking();
  CHECK(st.pending == 20);
  CHECK(st.leased_live + st.leased_expired == 0);
  if (!db.sql) s.command("{\"dibsRefuse\": \"" + s.name + "\"}");
}
