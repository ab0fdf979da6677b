// dibs bench's refusals that need no server: a file store, a table or collection the user names,
// a strategy the store does not have. Each exits 2 before anything is opened.
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/usage_error.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {
using dibs::test::check_usage_error;
using dibs::test::dibs_cli;
// Port 1 on loopback: nothing listens, so a refusal that came after a connection attempt would
// say "cannot connect" instead.
const std::string nowhere_mysql = "mysql://app@127.0.0.1:1/geo";
}  // namespace

TEST_CASE("dibs bench is not for files", "[cli][bench]") {
  check_usage_error({"bench", "--store", "jsonl:in.jsonl"}, "dibs: error: --store: dibs bench is not for files (jsonl:)");
}

TEST_CASE("dibs bench refuses a table or collection the user names, before connecting", "[cli][bench]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"bench", "--store", nowhere_mysql + "?table=jobs"},
           {"bench", "--store", "postgresql://app@127.0.0.1:1/geo?sslmode=disable&table=jobs"},
           {"bench", "--store", "mongodb://127.0.0.1:1/test?collection=jobs"}}) {
    const auto r = dibs_cli(args);
    INFO(args[2] << ": " << r.out);
    CHECK(r.rc == 2);
    CHECK_THAT(r.out, Catch::Contains("dibs bench will not use the table 'jobs' that --store names"));
    CHECK_THAT(r.out, Catch::Contains("scratch tables of its own"));
  }
  const auto r = dibs_cli({"bench", "--store", "mongodb://127.0.0.1:1/test", "--collection", "message"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("dibs bench will not use --collection 'message'"));
}

TEST_CASE("dibs bench refuses a strategy the store does not have, naming the ones it has", "[cli][bench]") {
  const auto r = dibs_cli({"bench", "--store", nowhere_mysql, "--strategies", "update-find"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("--strategies: 'update-find' is not a claim strategy of mysql stores (skip-locked, or all)"));
  const auto bad_latency = dibs_cli({"bench", "--store", nowhere_mysql, "--latency", "soon"});
  CHECK(bad_latency.rc == 2);
  CHECK_THAT(bad_latency.out, Catch::Contains("--latency"));
}
