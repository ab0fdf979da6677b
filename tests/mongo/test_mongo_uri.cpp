// The store URI grammar end to end, against the server: `dibs seed` and `dibs status` with the
// database in the URI's path and the collection in ?collection= reach the same documents as
// --db and --collection do, and the flags override the URI.
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/stores/mongo_store.hpp>
#include <adapters/mongo/test_hooks.hpp>
#include <dibs/stores/store_uri.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("dibs seed and status find the database in the URI's path and the collection in collection=",
          "[mongo][uri][cli]") {
  const auto dibs_bin = test::dibs_binary();
  const auto collection = test::unique_collection("uri");
  // The server's URI with its path and collection= set, its own options kept.
  const auto base = parse_store_uri(test::mongodb_uri());
  const auto q = base.after_hosts.find('?');
  const std::string options = q == std::string::npos ? "" : "&" + base.after_hosts.substr(q + 1);
  const auto uri = base.before_hosts + base.hosts + "/dibs_test?collection=" + collection + options;

  mongo::mongo_options o;
  o.uri = test::mongodb_uri();
  o.db = "dibs_test";
  o.collection = collection;
  mongo::mongo_store s(o);
  mongo::drop(s);

  std::string out;
  test::child_process seed({dibs_bin, "seed", "--store", uri, "--docs", "40"}, true);
  REQUIRE(seed.finish(out) == 0);
  CHECK_THAT(out, Catch::Contains("dibs_test." + collection));
  CHECK(s.stats_blocking().pending == 40);  // where the URI said, not test.message

  test::child_process status({dibs_bin, "status", "--store", uri}, true);
  REQUIRE(status.finish(out) == 0);
  CHECK(test::last_line(out) == "status: pending=40 leased_live=0 leased_expired=0 done=0 failed=0");

  // --db and --collection override the URI's.
  const auto elsewhere = base.before_hosts + base.hosts + "/nowhere?collection=nothing" + options;
  test::child_process flagged({dibs_bin, "status", "--store", elsewhere, "--db", "dibs_test", "--collection", collection}, true);
  REQUIRE(flagged.finish(out) == 0);
  CHECK(test::last_line(out) == "status: pending=40 leased_live=0 leased_expired=0 done=0 failed=0");
  // The URI's own names are the ones looked for: there is no nowhere.nothing, and status creates none.
  test::child_process missing({dibs_bin, "status", "--store", elsewhere}, true);
  REQUIRE(missing.finish(out) == 2);
  CHECK_THAT(out, Catch::Contains("no collection 'nothing' in database nowhere"));
  mongo::drop(s);
}
