// dibs bench on the MongoDB-wire stand-in: a row per claim strategy with docs/s and commands per
// document (counted by the driver's command monitoring), the scratch collections gone afterwards,
// and a user's collection untouched: handed to a worker, or named like a scratch without the marker.
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>
#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace dibs;

namespace {
using test::run_dibs;
mongo::mongo_options bench_options(const std::string& collection) {
  mongo::mongo_options o;
  o.uri = test::mongodb_uri();
  o.db = "dibs_bench_test";
  o.collection = collection;
  return o;
}
// The collection names of the test database that start with dibs_bench_, in order.
std::string scratch_collections(mongo::mongo_store& s) {
  const auto reply = mongo::run_command(s, R"({"listCollections": 1, "nameOnly": true})");
  std::string names;
  simdjson::dom::parser parser;
  for (auto c : simdjson::dom::array(parser.parse(reply)["cursor"]["firstBatch"])) {
    const std::string name{std::string_view(c["name"])};
    if (name.rfind("dibs_bench_", 0) == 0) names += name + ",";
  }
  return names;
}
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("dibs bench on MongoDB drains with every claim strategy, counts commands per document, and drops its scratch",
          "[mongo][bench]") {
  mongo::mongo_store s(bench_options(test::unique_collection("benchbase")));
  const auto before = scratch_collections(s);
  const std::string json = "/tmp/dibs_bench_mongo_test_" + std::to_string(::getpid()) + ".json";
  std::string out;
  const int rc = run_dibs({"bench", "--store", test::mongodb_uri(), "--db", "dibs_bench_test", "--docs", "60",
                           "--concurrency", "20", "--claim-batch", "20", "--json", json},
                          out);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("| strategy | docs | docs/s | commands/doc |"));
  simdjson::dom::parser parser;
  const auto doc = parser.parse(read_file(json));
  std::vector<std::string> seen;
  for (auto row : simdjson::dom::array(doc["strategies"])) {
    const std::string strategy{std::string_view(row["strategy"])};
    seen.push_back(strategy);
    INFO(strategy);
    CHECK_THAT(out, Catch::Contains("| " + strategy + " | 60 | "));
    CHECK(int64_t(row["docs"]) == 60);
    CHECK(double(row["docs_per_s"]) > 0);
    // At least one command per claim and per write; per document, more than none.
    CHECK(double(row["statements_per_doc"]) > 0);
    CHECK(double(row["claim_p50_ms"]) > 0);
  }
  CHECK(seen == std::vector<std::string>{"batch", "lock-collection", "update-find", "find-and-modify"});
  CHECK(scratch_collections(s) == before);
  std::remove(json.c_str());

  // Two processes, one strategy: the worker's documents count too.
  REQUIRE(run_dibs({"bench", "--store", test::mongodb_uri(), "--db", "dibs_bench_test", "--docs", "60", "--processes",
                    "2", "--strategies", "update-find", "--concurrency", "10"},
                   out) == 0);
  CHECK_THAT(out, Catch::Contains("| update-find | 60 | "));
  CHECK(scratch_collections(s) == before);
}

TEST_CASE("dibs bench on MongoDB leaves a collection it did not mark alone", "[mongo][bench]") {
  const std::string lookalike = "dibs_bench_" + std::string("0123456789ab");
  mongo::mongo_store s(bench_options(lookalike));
  mongo::run_command(s, R"({"delete": ")" + lookalike + R"(", "deletes": [{"q": {}, "limit": 0}]})");
  s.seed(4, 1);
  std::string out;
  CHECK(run_dibs({"bench", "--store", test::mongodb_uri(), "--db", "dibs_bench_test", "--worker", lookalike}, out) == 2);
  CHECK_THAT(out, Catch::Contains("'" + lookalike + "' in database dibs_bench_test is not a scratch table dibs bench made"));
  REQUIRE(run_dibs({"bench", "--store", test::mongodb_uri(), "--db", "dibs_bench_test", "--clean"}, out) == 0);
  CHECK_THAT(out, !Catch::Contains(lookalike));
  CHECK(s.stats_blocking().pending == 4);
  mongo::run_command(s, R"({"drop": ")" + lookalike + R"("})");
}
