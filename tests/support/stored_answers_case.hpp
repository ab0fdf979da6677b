// `dibs enrich --reuse-answers store` twice over the same addresses, as users run it, the same on
// every store: the second run (a new process, an empty cache of its own) asks the API nothing,
// takes every answer from the store's dibs_answers and says so. `store_args` name the store
// (--store URI, and --db/--collection where MongoDB needs them); the table or collection must not
// exist yet (`dibs seed` makes it).
#pragma once

#include "support/run_dibs.hpp"

#include <adapters/demo_api/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace dibs::test {

inline void check_answers_kept_in_store(const std::vector<std::string>& store_args) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto with_store = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, store_args.begin(), store_args.end());
    return args;
  };
  const auto seed = with_store({"seed", "--docs", "60", "--distinct", "6", "--seed", "9"});
  const auto enrich = with_store({"enrich", "--url", api.base_url() + "/json/{originatingIp}", "--reuse-answers", "store",
                                  "--no-progress", "--no-preflight"});
  auto [rc, out] = run_dibs(seed);
  INFO(out);
  REQUIRE(rc == 0);
  std::tie(rc, out) = run_dibs(enrich);
  REQUIRE(rc == 0);
  const auto served = api.requests();
  CHECK(served >= 1);
  CHECK(served <= 6);
  CHECK_THAT(out, Catch::Contains("this run: 60 done, 0 failed; answers reused: "));

  // The same addresses again, for a new process with nothing in its own cache.
  std::tie(rc, out) = run_dibs(seed);
  REQUIRE(rc == 0);
  std::tie(rc, out) = run_dibs(enrich);
  REQUIRE(rc == 0);
  CHECK(api.requests() == served);
  CHECK_THAT(out, Catch::Contains("this run: 60 done, 0 failed; answers reused: "));
  CHECK_THAT(out, Catch::Contains(" from the store), "));
  CHECK_THAT(out, Catch::Contains(", 0 API calls (100% hits)"));
}

}  // namespace dibs::test
