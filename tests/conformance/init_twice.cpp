// dibs init as users run it, twice, with a typo the first time, on every store: a misspelled
// table or collection and a misspelled --target are refused with the name meant (nothing made)
// unless the user says they are new; and dibs init run again with another target moves what dibs
// derived from the first (MariaDB's claim column dibs_open, PostgreSQL's and MongoDB's claim
// index), so a corrected target keeps every value the user's rows already hold and costs one call
// a pending row.
#include "support/backend.hpp"
#include "support/own_place.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::run_dibs;
using test::db;


// What the claim object dibs derived from the target reads, as the server says it.
std::string claim_object(const std::string& place) {
  if (db.sql) return db.dialect().query_value(db.sql_of().claim_object_query(place)).value_or("");
  auto& t = test::detail::admin(db);
  return t.command("{\"listIndexes\": \"" + place + "\"}");
}
}  // namespace

BACKEND_TEST_CASE("dibs init refuses a misspelled table or collection, naming the one meant, unless --new-table",
                  "[own-table][init]") {
  const auto name = db.unique_name("peoplz");
  test::make_own_place(db, name, test::half_answered(4));
  const auto typo = "poeplz" + name.substr(6);
  auto [rc, out] = test::dibs_at(db, typo, {"init", "--source", "ip", "--target", "geo_json"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("no " + db.facts.noun + " '" + typo + "'") && Catch::Contains("did you mean '" + name + "'?") &&
                      Catch::Contains("--new-table"));
  CHECK_FALSE(db.exists(typo));
  // Said to be new, it is made.
  std::tie(rc, out) = test::dibs_at(db, typo, {"init", "--new-table"});
  CHECK(rc == 0);
  CHECK(db.exists(typo));
  if (db.sql)
    for (const auto& made : {name, typo}) db.dialect().execute("DROP TABLE " + made);
}

BACKEND_TEST_CASE("dibs init refuses a misspelled --target, naming the one meant, unless --new-target", "[own-table][init]") {
  const auto name = db.unique_name("people_typo");
  test::make_own_place(db, name, test::half_answered(6));
  auto [rc, out] = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geojson"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--target geojson: ") && Catch::Contains("did you mean 'geo_json'?") &&
                      Catch::Contains("--new-target"));
  std::tie(rc, out) = test::dibs_at(db, name, {"status"});
  CHECK(rc == 2);  // nothing was recorded: the default target, location, is no column (field) of it
  std::tie(rc, out) = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geojson", "--new-target"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("recorded --source ip --target geojson"));
  if (db.sql) db.dialect().execute("DROP TABLE " + name);
}

BACKEND_TEST_CASE("dibs init run again with the corrected target keeps every value already there and costs one call a "
                  "pending row",
                  "[own-table][init]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto name = db.unique_name("people_fix");
  test::make_own_place(db, name, test::half_answered(100));  // 50 with geo_json set
  // The typo, insisted upon; then the target meant.
  auto [rc, out] = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geojson", "--new-target"});
  INFO(out);
  REQUIRE(rc == 0);
  const auto before = claim_object(name);
  CHECK_THAT(before, Catch::Contains("geojson"));
  std::tie(rc, out) = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geo_json"});
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("recorded --source ip --target geo_json"));
  const auto after = claim_object(name);
  CHECK_THAT(after, Catch::Contains("geo_json") && !Catch::Contains("geojson"));
  std::tie(rc, out) = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geo_json"});  // a third time: nothing moves
  CHECK(rc == 0);
  CHECK(claim_object(name) == after);

  std::tie(rc, out) = test::dibs_at(db, name, {"status"});
  CHECK(rc == 0);
  CHECK(test::last_line(out) == "status: pending=50 leased_live=0 leased_expired=0 done=50 failed=0");
  const auto calls_before = api.requests();
  std::tie(rc, out) = test::dibs_at(db, name, {"enrich", "--url", api.base_url() + "/json/{ip}", "--no-progress"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("this run: 50 done, 0 failed"));
  CHECK(api.requests() - calls_before <= 51);  // each pending row once, and the pre-flight's request
  CHECK(test::count_kept(db, name) == 50);     // the user's values, every one
  CHECK(test::count_where(db, name, db.sql ? "geo_json IS NULL" : "", "{\"geo_json\": null}") == 0);
  if (db.sql) db.dialect().execute("DROP TABLE " + name);
}
