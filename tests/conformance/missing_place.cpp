// A table or collection that is not there, on every store, as users meet it: dibs enrich and dibs
// status create nothing (they refuse it by name, with the one probably meant, and say how to
// create it); dibs seed and dibs init may create it, and dibs status then opens it.
#include "support/backend.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::run_dibs;
std::vector<std::string> command(const std::string& name, const std::vector<std::string>& where,
                                 std::vector<std::string> more = {}) {
  std::vector<std::string> args{name};
  args.insert(args.end(), where.begin(), where.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}
}  // namespace

BACKEND_TEST_CASE("dibs enrich and dibs status refuse a missing table or collection by name, with the one meant, "
                  "and create nothing",
                  "[own-table]") {
  const auto& db = test::this_backend();
  const auto& noun = db.facts.noun;
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = db.fresh("ownzq");
  const auto& name = s.name;  // the one the user meant
  s.seed(2, 1);
  const auto typo = "onwzq" + name.substr(5);
  const auto typo_where = db.where_for(typo);
  std::string out;
  for (const auto& cmd : {std::string("enrich"), std::string("status")}) {
    auto args = command(cmd, typo_where);
    if (cmd == "enrich") args.insert(args.end(), {"--url", api.base_url() + "/json/{originatingIp}", "--no-progress"});
    const int rc = run_dibs(args, out);
    INFO(cmd << ": " << out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains("dibs: error: no " + noun + " '" + typo + "' " + db.facts.in_database));
    CHECK_THAT(out, Catch::Contains("did you mean '" + name + "'?"));
    CHECK_THAT(out, Catch::Contains("create it with: dibs init --store '"));
    CHECK_FALSE(db.exists(typo));
  }
  CHECK(api.requests() == 0);
  CHECK(db.exists(name));

  // dibs seed may create it.
  REQUIRE(run_dibs(command("seed", typo_where, {"--docs", "3"}), out) == 0);
  CHECK(db.exists(typo));
  // So may dibs init, told it is new (init_twice.cpp: a misspelled one is refused); dibs status then opens it.
  const auto created = "onwzr" + name.substr(5);
  const auto created_where = db.where_for(created);
  REQUIRE(run_dibs(command("init", created_where, {"--new-table"}), out) == 0);
  INFO(out);
  CHECK(db.exists(created));
  CHECK(run_dibs(command("status", created_where), out) == 0);
  if (db.sql)
    for (const auto& made : {typo, created}) s.execute("DROP TABLE " + made);
}
