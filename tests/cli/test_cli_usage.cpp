// Usage errors as a user meets them: the real `dibs` binary, a typo, and what it prints and
// returns (exit 2 for every usage error; --help and --version exit 0).
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/usage_error.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using dibs::test::check_usage_error;
using dibs::test::dibs_cli;

TEST_CASE("a misspelled command exits 2 and names the command meant", "[cli][usage]") {
  const auto r = dibs_cli({"enrch", "--store", "jsonl:x.jsonl"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error: 'enrch' is not a dibs command; did you mean 'enrich'?"));
  CHECK_THAT(r.out, Catch::Contains("commands: demo, enrich"));
}

TEST_CASE("a misspelled flag exits 2 and names the flag meant, before any missing required flag", "[cli][usage]") {
  check_usage_error({"enrich", "--stroe", "jsonl:x.jsonl"},
                    "dibs: error: dibs enrich has no flag --stroe; did you mean --store?");
}

TEST_CASE("a missing required flag exits 2 with the dibs prefix", "[cli][usage]") {
  check_usage_error({"status"}, "dibs: error: --store is required");
}

TEST_CASE("with --log-json a usage error is one JSON line", "[cli][usage]") {
  const auto r = dibs_cli({"--log-json", "enrich", "--concurency", "5"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("{") && Catch::Contains("did you mean --concurrency?"));
  CHECK(r.out.find('\n') == r.out.size() - 1);
}

TEST_CASE("dibs --version prints the version and exits 0", "[cli][usage]") {
  const auto r = dibs_cli({"--version"});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Matches("dibs [0-9]+\\.[0-9]+\\.[0-9]+\\s*"));
}

TEST_CASE("bare dibs lists the commands and exits 2", "[cli][usage]") {
  const auto r = dibs_cli({});
  INFO(r.out);
  CHECK(r.rc == 2);
  for (const char* c : {"demo", "enrich", "seed", "status", "stub"}) CHECK_THAT(r.out, Catch::Contains(c));
  CHECK_THAT(r.out, Catch::Contains("Usage: dibs "));
  CHECK_THAT(r.out, Catch::Contains("Exit codes: 0 nothing failed; 1 some items failed; 2 usage"));
  // Every code a run ends with (exit_codes.hpp), as the README lists them: a new user found 4 and
  // 5 only there.
  CHECK_THAT(r.out, Catch::Contains("4 a call budget spent"));
  CHECK_THAT(r.out, Catch::Contains("account can make no more calls"));
}

TEST_CASE("--help still exits 0", "[cli][usage]") {
  const auto r = dibs_cli({"enrich", "--help"});
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("--store"));
}

TEST_CASE("dibs init --help lists only the flags init uses, with examples", "[cli][usage][first-minutes]") {
  const auto r = dibs_cli({"init", "--help"});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("--source") && Catch::Contains("--target") && Catch::Contains("Examples:") &&
                        Catch::Contains("dibs init --store 'mysql://app@127.0.0.1:3306/shop?table=visits'"));
  // Flags of the commands that run or read a table, not of the one that prepares it.
  // (The option lines: --store's own help names --out for JSON Lines files.)
  CHECK_THAT(r.out, Catch::Contains("\n  --source"));
  CHECK_THAT(r.out, !Catch::Contains("\n  --out") && !Catch::Contains("\n  --db-threads"));
  // What init must be told: that a table (collection) or a target column (field) is new.
  CHECK_THAT(r.out, Catch::Contains("\n  --new-target") && Catch::Contains("\n  --new-table"));
}
