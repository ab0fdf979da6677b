// MongoDB checks the target before it claims, and remembers what dibs init was told: a collection
// whose documents have `geo` and no `location` is refused when --target is forgotten (naming
// --target and the field meant), not re-called document by document; after `dibs init --source ip
// --target geo`, enrich, status, retry and release need only --store, and a flag that
// contradicts the record is refused with both values.
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
struct geo_collection : test::mongo_collection {
  explicit geo_collection(const std::string& name)
      : mongo_collection(name, [](mongo::mongo_options& o) {
          o.names.source = "ip";  // this fixture's own view: the user's names
          o.names.target = "geo";
        }) {
    // Three done by the user's earlier job, two open, in the user's own field names.
    mongo::run_command(s, "{\"insert\": \"" + o.collection +
                                   "\", \"documents\": [{\"ip\": \"8.8.8.8\", \"geo\": {\"country\": \"Atlantis\"}}, "
                                   "{\"ip\": \"1.1.1.1\", \"geo\": {\"country\": \"Atlantis\"}}, "
                                   "{\"ip\": \"9.9.9.9\", \"geo\": {\"country\": \"Atlantis\"}}, "
                                   "{\"ip\": \"64.6.64.6\", \"geo\": null}, {\"ip\": \"208.67.222.222\", \"geo\": null}]}");
  }
  ~geo_collection() { mongo::drop(s); }
  std::pair<int, std::string> dibs(std::vector<std::string> args) const {
    const auto flags = where();
    args.insert(args.begin() + 1, flags.begin(), flags.end());
    return test::run_dibs(args, test::stdin_from::dev_null);
  }
};
}  // namespace

TEST_CASE("MongoDB: a forgotten --target is refused before anything is claimed, naming the field meant",
          "[mongo][refusal][settings]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  geo_collection c("forgotten_target");
  auto [rc, out] = c.dibs({"enrich", "--url", api.base_url() + "/json/{ip}", "--no-progress"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--target location: no document of collection dibs_test.") &&
                      Catch::Contains("did you mean 'geo'?") && Catch::Contains("--new-target"));
  CHECK(api.requests() == 0);
  CHECK(c.s.stats_blocking().done == 3);  // nothing was written

  std::tie(rc, out) = c.dibs({"status"});
  CHECK(rc == 2);  // not "pending=5": the finished documents are not pending
  CHECK_THAT(out, Catch::Contains("did you mean 'geo'?"));

  std::tie(rc, out) = c.dibs({"enrich", "--target", "geo", "--url", api.base_url() + "/json/{ip}", "--no-progress"});
  CHECK(rc == 0);
  CHECK(api.requests() == 2);  // the two open documents, once each (the pre-flight's answer is its document's)

  std::tie(rc, out) = c.dibs({"status", "--new-target"});  // a new field: every document lacks it, as said
  CHECK(rc == 0);
  CHECK(test::last_line(out) == "status: pending=5 leased_live=0 leased_expired=0 done=0 failed=0");
}

TEST_CASE("MongoDB: after dibs init, enrich, status, retry and release need only --store, and a contradicting flag is refused",
          "[mongo][settings]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  geo_collection c("init_settings");
  auto [rc, out] = c.dibs({"init", "--source", "ip", "--target", "geo"});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("recorded --source ip --target geo"));

  std::tie(rc, out) = c.dibs({"status"});
  CHECK(rc == 0);
  CHECK(test::last_line(out) == "status: pending=2 leased_live=0 leased_expired=0 done=3 failed=0");

  std::tie(rc, out) = c.dibs({"status", "--target", "location"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--target location contradicts what dibs init recorded for collection dibs_test.") &&
                      Catch::Contains(": --target geo"));

  std::tie(rc, out) = c.dibs({"enrich", "--url", api.base_url() + "/json/{ip}", "--no-progress"});
  CHECK(rc == 0);
  CHECK(c.s.stats_blocking().done == 5);
  std::tie(rc, out) = c.dibs({"status"});
  CHECK(test::last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=5 failed=0");

  std::tie(rc, out) = c.dibs({"retry"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending"));
  std::tie(rc, out) = c.dibs({"release", "--worker", "gone-host", "--yes"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("release: 0 leases of worker gone-host released"));
}
