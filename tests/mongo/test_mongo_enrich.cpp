// `dibs enrich` as a user runs it, over MongoDB and the stub, for every claim strategy.
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/mongo/test_hooks.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <thread>

using namespace dibs;

namespace {
using test::utf8_at;
std::set<std::string> keys_of(const bson_t* doc) {
  std::set<std::string> out;
  bson_iter_t it;
  if (bson_iter_init(&it, doc))
    while (bson_iter_next(&it)) out.insert(bson_iter_key(&it));
  return out;
}
}  // namespace

// 500 documents, more than 200 pipelines claim at once: the stand-in scans every document per
// operation, so 2,000 took 175 s of the suite's serial time for nothing more checked.
TEST_CASE("dibs enrich finishes 500 documents with every claim strategy", "[mongo][enrich][e2e]") {
  const auto dibs_bin = test::dibs_binary();
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();

  for (const char* strategy : {"batch", "lock-collection", "update-find", "find-and-modify"}) {
    DYNAMIC_SECTION(strategy) {
      test::mongo_collection c("enrich");
      auto& [o, s] = c;

      std::string out;
      test::child_process seed({dibs_bin, "seed", "--store", o.uri, "--db", o.db, "--collection", o.collection,
                                "--docs", "500"});
      REQUIRE(seed.finish(out) == 0);

      // One private address: ip-api's answer for it is a definitive "no data", written as the
      // document's answer (as the Python recipe does), counted apart, and no failure.
      mongo::run_command(s, "{\"insert\": \"" + o.collection +
                    "\", \"documents\": [{\"originatingIp\": \"10.1.2.3\", \"location\": null}]}");

      out.clear();
      const auto before = api.requests();
      test::child_process run({dibs_bin, "enrich", "--store", o.uri, "--db", o.db, "--collection", o.collection,
                               "--source", "originatingIp", "--target", "location", "--claim", strategy, "--url",
                               api.base_url() + "/json/{originatingIp}", "--concurrency", "200", "--no-progress"});
      const int rc = run.finish(out);
      INFO(out);
      REQUIRE(rc == 0);  // "no data" is not a failure: `dibs enrich ... || alert` stays quiet
      CHECK(test::last_line(out).rfind("summary: completed=500 failed=0 lost_leases=0 released=0 elapsed_s=", 0) == 0);
      CHECK_THAT(test::last_line(out), Catch::Contains(" no_data=1"));
      CHECK(api.requests() - before == 501);  // each document fetched exactly once (the pre-flight's answer is its own)

      auto st = s.stats_blocking();
      CHECK(st.done == 501);
      CHECK(st.failed == 0);
      CHECK(st.drained());
      std::size_t finished = 0;
      for (auto& doc : mongo::documents(s)) {
        const auto ip = utf8_at(doc.get(), "originatingIp");
        if (ip == "10.1.2.3") {
          CHECK(utf8_at(doc.get(), "location.status") == "fail");
          CHECK(utf8_at(doc.get(), "location.message") == "private range");
          CHECK(keys_of(doc.get()) == std::set<std::string>{"_id", "originatingIp", "location"});
          continue;
        }
        // Exactly the seed's shape, with the answer in place and no lease left.
        CHECK(keys_of(doc.get()) == std::set<std::string>{"_id", "originatingIp", "location"});
        CHECK(utf8_at(doc.get(), "location.query") == ip);
        CHECK(utf8_at(doc.get(), "location.status") == "success");
        ++finished;
      }
      CHECK(finished == 500);

      out.clear();
      test::child_process status({dibs_bin, "status", "--store", o.uri, "--db", o.db, "--collection", o.collection,
                                  "--claim", strategy});
      REQUIRE(status.finish(out) == 0);
      CHECK(test::last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=500 failed=0 no_data=1");
    }
  }
}

TEST_CASE("dibs enrich names a bad store or strategy clearly", "[mongo][enrich]") {
  const auto dibs_bin = test::dibs_binary();
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), dibs_bin);
    test::child_process p(args, true);
    std::string out;
    const int rc = p.finish(out);
    return std::pair{rc, out};
  };
  auto [rc1, out1] = run({"enrich", "--store", test::mongodb_uri(), "--url", "http://127.0.0.1:1/{x}", "--claim", "fastest"});
  CHECK(rc1 == 2);
  CHECK_THAT(out1, Catch::Contains("--claim 'fastest'"));
  auto [rc2, out2] = run({"enrich", "--store", "redis://u:pw@h/db", "--url", "http://h/{x}"});
  CHECK(rc2 == 2);
  CHECK_THAT(out2, Catch::Contains("expected mongodb://") && !Catch::Contains("pw@"));
  auto [rc3, out3] = run({"status", "--store", "mongodb://u:pw@127.0.0.1:1/?serverSelectionTimeoutMS=200"});
  CHECK(rc3 == 2);
  CHECK_THAT(out3, Catch::Contains("cannot reach MongoDB") && !Catch::Contains(":pw@"));
  auto [rc4, out4] = run({"enrich", "--store", test::mongodb_uri(), "--url", "ftp://h/{originatingIp}"});
  CHECK(rc4 == 2);
  CHECK_THAT(out4, Catch::Contains("unsupported scheme"));
}

TEST_CASE("dibs enrich --follow processes documents inserted while it runs", "[mongo][enrich][follow]") {
  const auto dibs_bin = test::dibs_binary();
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  test::mongo_collection c("follow");
  auto& [o, s] = c;
  s.seed(100, 1);

  test::child_process run({dibs_bin, "enrich", "--follow", "--store", o.uri, "--db", o.db, "--collection",
                           o.collection, "--url", api.base_url() + "/json/{originatingIp}", "--concurrency", "50",
                           "--no-progress"});
  // Wait for a state of the store, not for a time: poll its counts, bounded.
  auto wait_done = [&](std::uint64_t n) {
    for (int i = 0; i < 1200 && s.stats_blocking().done < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return s.stats_blocking().done;
  };
  CHECK(wait_done(100) == 100);
  s.seed(150, 2);  // a producer adds work while the consumer idles
  CHECK(wait_done(250) == 250);
  run.signal(SIGTERM);
  std::string out;
  CHECK(run.finish(out) == 0);
  INFO(out);
  CHECK(test::last_line(out).rfind("summary: completed=250 failed=0 lost_leases=0 released=0 ", 0) == 0);
  CHECK(api.requests() == 250);  // the pre-flight's answer, for one of the first 100, is its document's
  CHECK(s.stats_blocking().drained());
}
