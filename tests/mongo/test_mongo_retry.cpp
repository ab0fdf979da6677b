// `dibs retry` and `dibs status` over MongoDB (the stand-in, or MONGODB_URI) as users run them:
// failures counted by reason, put back by reason and then all (the whole lock field gone, so
// attempts are 0), done by the next `dibs enrich`, with a document strategy and with
// lock-collection; and a lock-collection run's leases counted as leased without --claim.
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
std::size_t with_lock_field(mongo::mongo_store& s) {
  std::size_t n = 0;
  for (auto& doc : mongo::documents(s)) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, doc.get(), "_dibs")) ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("dibs retry puts failed documents back by reason and enrich finishes them", "[mongo][retry][status][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  for (const char* strategy : {"batch", "lock-collection"}) {
    DYNAMIC_SECTION(strategy) {
      test::mongo_collection c("retry");
      auto& [o, s] = c;
      REQUIRE(s.seed(60, 3) == 60);
      mongo::run_command(s, "{\"insert\": \"" + o.collection +
                                "\", \"documents\": [{\"originatingIp\": \"10.1.2.3\", \"location\": null}, "
                                "{\"originatingIp\": \"10.1.2.4\", \"location\": null}, "
                                "{\"originatingIp\": \"nonsense\", \"location\": null}]}");
      const std::vector<std::string> where{"--store", o.uri, "--db", o.db, "--collection", o.collection, "--claim", strategy};
      auto cmd = [&](std::vector<std::string> args) {
        args.insert(args.begin() + 1, where.begin(), where.end());
        return test::run_dibs(args);
      };
      // ip-api's "no data" as failures, for this test's failures to retry (by default they are answers).
      auto [rc, out] = cmd({"enrich", "--url", api.base_url() + "/json/{originatingIp}", "--no-progress", "--no-data-fails"});
      INFO(out);
      REQUIRE(rc == 1);
      CHECK_THAT(out, Catch::Contains("store now: 60 done, 3 failed, 0 pending, 0 leased; this run: 60 done, 3 failed"));

      std::tie(rc, out) = cmd({"status", "--json"});
      REQUIRE(rc == 0);
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      REQUIRE_FALSE(parser.parse(test::last_line(out)).get(doc));
      CHECK(uint64_t(doc["failed"]) == 3);
      CHECK(std::string_view(doc["failure_reasons"].at(0)["reason"]) == "the API has no data: private range");
      CHECK(uint64_t(doc["failure_reasons"].at(0)["count"]) == 2);
      CHECK(simdjson::dom::array(doc["failure_reasons"].at(0)["example_ids"]).size() == 2);
      CHECK(std::string_view(doc["failure_reasons"].at(1)["reason"]) == "the API has no data: invalid query");

      std::tie(rc, out) = cmd({"retry", "--reason-is", "private range"});  // a part of the reason: none
      REQUIRE(rc == 0);
      CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending in "));
      std::tie(rc, out) = cmd({"retry", "--reason-is", "the API has no data: invalid query"});
      REQUIRE(rc == 0);
      CHECK_THAT(out, Catch::Contains("retry: 1 failed item back to pending in "));
      CHECK(s.stats_blocking().pending == 1);

      std::tie(rc, out) = cmd({"retry", "--reason", "private"});
      INFO(out);
      REQUIRE(rc == 0);
      CHECK_THAT(out, Catch::Contains("retry: 2 failed items back to pending in "));
      auto st = s.stats_blocking();
      CHECK(st.failed == 0);
      CHECK(st.pending == 3);
      CHECK(st.done == 60);
      CHECK(with_lock_field(s) == 0);  // back to the seed's shape

      std::tie(rc, out) = cmd({"retry", "--since", "1h"});
      CHECK_THAT(out, Catch::Contains("retry: 0 failed items back to pending"));
      CHECK(with_lock_field(s) == 0);

      std::tie(rc, out) = cmd({"enrich", "--url", api.base_url() + "/json/8.8.8.8?ip={originatingIp}", "--no-progress"});
      INFO(out);
      CHECK(rc == 0);
      CHECK(test::last_line(out).rfind("summary: completed=3 failed=0 ", 0) == 0);
      st = s.stats_blocking();
      CHECK(st.done == 63);
      CHECK(st.drained());
      mongo::drop(s);
    }
  }
}

TEST_CASE("dibs status counts a lock-collection run's leases as leased without --claim", "[mongo][status]") {
  test::mongo_collection c("lockstatus",
                           [&](mongo::mongo_options& o) { o.strategy = mongo::claim_strategy::lock_collection; });
  auto& [o, s] = c;
  REQUIRE(s.seed(20, 4) == 20);
  claim_request req;
  req.max = 5;
  req.by = "test-holder";
  req.lease = 600'000ms;
  REQUIRE(s.claim_blocking(req).size() == 5);
  for (const std::vector<std::string>& claim : {std::vector<std::string>{}, std::vector<std::string>{"--claim", "lock-collection"}}) {
    std::vector<std::string> args{"status", "--store", o.uri, "--db", o.db, "--collection", o.collection};
    args.insert(args.end(), claim.begin(), claim.end());
    auto [rc, out] = test::run_dibs(args);
    INFO(out);
    CHECK(rc == 0);
    CHECK(test::last_line(out) == "status: pending=15 leased_live=5 leased_expired=0 done=0 failed=0");
  }
  mongo::drop(s);
}

TEST_CASE("dibs enrich without --claim on a collection a lock-collection run works on claims through its locks: "
          "documents it holds are never claimed past them",
          "[mongo][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  // A lock-collection worker holds 5 documents (a run in another process, under way).
  test::mongo_collection c("lockenrich", [&](mongo::mongo_options& o) { o.strategy = mongo::claim_strategy::lock_collection; });
  auto& [o, s] = c;
  REQUIRE(s.seed(20, 5) == 20);
  claim_request req;
  req.max = 5;
  req.by = "other-run";
  req.lease = 600'000ms;
  REQUIRE(s.claim_blocking(req).size() == 5);
  const std::vector<std::string> where{"--store", o.uri, "--db", o.db, "--collection", o.collection};
  auto enrich = [&](std::vector<std::string> more) {
    std::vector<std::string> args{"enrich"};
    args.insert(args.end(), where.begin(), where.end());
    const std::vector<std::string> call{"--url", api.base_url() + "/json/{originatingIp}", "--no-progress"};
    args.insert(args.end(), call.begin(), call.end());
    args.insert(args.end(), more.begin(), more.end());
    return test::run_dibs(args);
  };
  // The default strategy, no dibs init: the documents' own lease field is empty, so a batch
  // claim took the 5 held ones too. (The run waits for leases held elsewhere: --max-calls ends
  // it once the 15 free ones are asked.)
  auto [rc, out] = enrich({"--max-calls", "15"});  // the pre-flight's claim goes through the locks too
  INFO(out);
  CHECK(rc == 4);
  CHECK(api.requests() == 15);
  CHECK_THAT(out, Catch::Contains("--claim lock-collection"));
  CHECK_THAT(out, Catch::Contains("store now: 15 done, 0 failed, 0 pending, 5 leased"));
  // Another strategy asked for by name: refused, with why, before any claim.
  std::tie(rc, out) = enrich({"--claim", "batch"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--claim batch: the lock collection") && Catch::Contains("give --claim lock-collection"));
  CHECK(api.requests() == 15);
  mongo::drop(s);
}
