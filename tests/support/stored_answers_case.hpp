// `dibs enrich --reuse-answers store` over the same addresses again and again, as users run it,
// the same on every store: the second run (a new process, an empty cache of its own) asks the
// API nothing, takes every answer from the store's dibs_answers, says so, and writes each row its
// own address's answer; once the kept answers are older than --answer-ttl, a third run asks the
// API again. The store's side is given as functions (its dialect): the table or collection
// `args` name must not exist yet (`dibs seed` makes it).
#pragma once

#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

namespace dibs::test {

struct kept_answers_store {
  std::vector<std::string> args;         // --store URI (and --db, --collection for MongoDB)
  std::function<void()> forget_answers;  // empties dibs_answers (made if missing)
  std::function<void()> age_answers;     // moves every kept answer 2 hours into the past
  std::function<long()> wrong_answers;   // done rows whose answer is not their own address's ("query")
};

inline void check_answers_kept_in_store(const kept_answers_store& s) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  s.forget_answers();  // answers a run before this one kept for another stub on this port
  auto with_store = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, s.args.begin(), s.args.end());
    return args;
  };
  const auto seed = with_store({"seed", "--docs", "60", "--distinct", "6", "--seed", "9"});
  const auto enrich = with_store({"enrich", "--url", api.base_url() + "/json/{originatingIp}", "--reuse-answers", "store",
                                  "--answer-ttl", "1h", "--no-progress", "--no-preflight"});
  auto [rc, out] = run_dibs(seed);
  INFO(out);
  REQUIRE(rc == 0);
  std::tie(rc, out) = run_dibs(enrich);
  REQUIRE(rc == 0);
  const auto served = api.requests();
  CHECK(served == 6);  // one request per address: --distinct 6, no pre-flight, nothing kept before
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
  CHECK(s.wrong_answers() == 0);

  // Kept two hours ago, with --answer-ttl 1h: asked again, by the store's own measure of age.
  s.age_answers();
  std::tie(rc, out) = run_dibs(seed);
  REQUIRE(rc == 0);
  std::tie(rc, out) = run_dibs(enrich);
  REQUIRE(rc == 0);
  CHECK(api.requests() == 2 * served);
  CHECK_THAT(out, !Catch::Contains(" from the store), "));
  CHECK(s.wrong_answers() == 0);
}

}  // namespace dibs::test
