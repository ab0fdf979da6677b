// The user's own MongoDB collection, as users meet it (a missing one: conformance/missing_place.cpp):
// documents whose --lock-field holds a value dibs did not write are left alone and counted as
// failed, with one warning, for every claim strategy; and such a run still stops at SIGTERM.
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace dibs;

namespace {
using test::run_dibs;
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
mongo::mongo_options own_options(const std::string& collection, const std::string& strategy = "batch") {
  auto o = test::options_for_collection(collection);
  o.strategy = *mongo::parse_strategy(strategy);
  return o;
}
// Three documents whose lease field is the user's own: false, a string, a number.
void insert_foreign(mongo::mongo_store& s, const std::string& collection) {
  mongo::run_command(s, "{\"insert\": \"" + collection +
                            "\", \"documents\": [{\"originatingIp\": \"8.8.4.1\", \"location\": null, \"_dibs\": false},"
                            "{\"originatingIp\": \"8.8.4.2\", \"location\": null, \"_dibs\": \"mine\"},"
                            "{\"originatingIp\": \"8.8.4.3\", \"location\": null, \"_dibs\": 7}]}");
}
std::string without_spaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}
const std::string foreign_warning = "hold in --lock-field _dibs a value dibs did not write";
}  // namespace

TEST_CASE("documents whose --lock-field holds a value dibs did not write are left alone and counted as failed",
          "[mongo][own-collection][foreign-lease]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  for (const char* strategy : {"batch", "update-find", "find-and-modify", "lock-collection"}) {
    DYNAMIC_SECTION(strategy) {
      const auto collection = test::unique_collection("foreign");
      mongo::mongo_store s(own_options(collection, strategy));
      mongo::drop(s);
      REQUIRE(s.seed(20, 3) == 20);
      insert_foreign(s, collection);
      std::string out;
      const int rc = run_dibs({"enrich", "--store", test::mongodb_uri(), "--db", "dibs_test", "--collection", collection,
                               "--claim", strategy, "--url", api.base_url() + "/json/{originatingIp}", "--no-progress"},
                              out);
      INFO(out);
      CHECK(rc == 0);  // nothing failed in this run: the three were never taken
      CHECK(occurrences(out, foreign_warning) == 1);
      CHECK_THAT(out, Catch::Contains("3 document(s) of dibs_test." + collection + " " + foreign_warning));
      CHECK_THAT(out, Catch::Contains("20 done, 3 failed, 0 pending, 0 leased"));
      CHECK(occurrences(out, "lease lost") == 0);
      CHECK(api.requests() >= 20);
      // The user's values are still theirs.
      for (const char* kept : {"false", "\"mine\"", "7"}) {
        const auto n = mongo::run_command(s, "{\"count\": \"" + collection + "\", \"query\": {\"_dibs\": " + kept +
                                                 ", \"location\": null}}");
        CHECK_THAT(without_spaces(n), Catch::Contains("\"n\":{\"$numberInt\":\"1\"}") ||
                                          Catch::Contains("\"n\":{\"$numberLong\":\"1\"}"));
      }
      const auto st = s.stats_blocking();
      CHECK(st.done == 20);
      CHECK(st.failed == 3);
      CHECK(st.drained());
    }
  }
}

TEST_CASE("SIGTERM stops a run over documents with foreign lease values, with every claim strategy",
          "[mongo][own-collection][foreign-lease][signals]") {
  // A slow API and one call at a time: the run is still going when the signal comes.
  stub::ipapi_stub api(stub::stub_options::loopback(std::chrono::milliseconds(200)));
  api.start();
  for (const char* strategy : {"update-find", "batch", "find-and-modify", "lock-collection"}) {
    DYNAMIC_SECTION(strategy) {
      const auto collection = test::unique_collection("foreign_term");
      mongo::mongo_store s(own_options(collection, strategy));
      mongo::drop(s);
      REQUIRE(s.seed(40, 4) == 40);
      insert_foreign(s, collection);
      test::child_process run({test::dibs_binary(), "enrich", "--store", test::mongodb_uri(), "--db",
                               "dibs_test", "--collection", collection, "--claim", strategy, "--url",
                               api.base_url() + "/json/{originatingIp}", "--concurrency", "1", "--no-progress"},
                              /*merge_stderr=*/true);
      // Waits for a state (work under way), not for a time; bounded.
      for (int i = 0; i < 600 && s.stats_blocking().done < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      REQUIRE(s.stats_blocking().done >= 1);
      const auto signalled = std::chrono::steady_clock::now();
      run.signal(SIGTERM);
      std::string out;
      const int rc = run.finish(out);
      INFO(out);
      CHECK(rc == 143);
      CHECK(std::chrono::steady_clock::now() - signalled < std::chrono::seconds(20));  // generous: "promptly"
      CHECK(s.stats_blocking().done < 40);  // it was stopped, not finished
      CHECK(occurrences(out, foreign_warning) == 1);
    }
  }
}
