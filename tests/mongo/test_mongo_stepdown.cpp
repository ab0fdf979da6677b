// A primary stepping down mid-run (the stand-in's dibsStepDown: writes answered NotWritablePrimary,
// as a command error or as one write error per statement, reads NotPrimaryNoSecondaryOk): the
// workers retry through it; no document spends an attempt on it (--max-attempts 1 would fail it),
// none is called twice, none is written twice.
#include "support/eventually.hpp"
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/skip.hpp"

#include <adapters/mongo/test_hooks.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include "support/text.hpp"

#include <regex>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::figure;
long count_of(const std::string& text, const std::string& what) {
  long n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("a MongoDB primary stepping down mid-run: the workers retry through it, no attempt spent, nothing written twice",
          "[mongo][enrich][stepdown]") {
  test::mongo_collection c("stepdown");
  auto& [o, s] = c;
  try {
    mongo::run_command(s, R"({"dibsWatch": ")" + o.collection + R"(", "field": "location", "lock": "_dibs"})");
  } catch (const mongo::mongo_error&) {
    test::skip("the server keeps no write log and steps down on no command (a real mongod)");
  }
  // 10 ms per answer, 4 at a time per worker: the run outlasts both windows.
  stub::ipapi_stub api(stub::stub_options::loopback(10ms));
  api.start();
  const long docs = 1000;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", o.uri, "--db", o.db, "--collection", o.collection, "--docs",
                            std::to_string(docs)});
  REQUIRE(seed.finish(out) == 0);

  std::vector<std::unique_ptr<test::child_process>> workers;
  for (int i = 0; i < 2; ++i)
    workers.push_back(std::make_unique<test::child_process>(std::vector<std::string>{
        test::dibs_binary(), "enrich", "--store", o.uri, "--db", o.db, "--collection", o.collection, "--url",
        api.base_url() + "/json/{originatingIp}", "--concurrency", "4", "--max-attempts", "1", "--no-progress",
        "--no-preflight"}, true));
  auto done = [&] {
    try {
      return static_cast<long>(s.stats_blocking().done);
    } catch (const std::exception&) {
      return -1L;  // a read inside the window
    }
  };
  // Two windows mid-run: the writes refused as write errors of each statement, then as command errors.
  for (const char* as : {"writeError", "command"}) {
    const long before = done();
    REQUIRE(test::eventually([&] { return done() > before + 40; }));
    mongo::run_command(s, std::string(R"({"dibsStepDown": 1500, "as": ")") + as + "\"}");
    REQUIRE(test::eventually([&] { return done() >= 0; }));  // reads answered again: the window is over
  }
  const auto answered = mongo::run_command(s, R"({"dibsStepDown": 0})");
  INFO(answered);
  CHECK(figure(answered, "\"stepDowns\" : \\{ \"\\$numberInt\" : \"(\\d+)\"") > 0);  // the windows met the workers

  long completed = 0, failed = 0;
  for (auto& w : workers) {
    out.clear();
    const int rc = w->finish(out);
    INFO(out);
    CHECK(rc == 0);
    completed += figure(out, "summary: completed=(\\d+) ");
    failed += figure(out, " failed=(\\d+) ");
  }
  CHECK(failed == 0);  // with --max-attempts 1, an attempt spent on the stepdown would fail its document
  CHECK(completed == docs);
  CHECK(api.requests() == static_cast<std::uint64_t>(docs));  // none called twice
  const auto st = s.stats_blocking();
  CHECK(st.done == static_cast<std::uint64_t>(docs));
  CHECK(st.drained());
  const auto log = mongo::run_command(s, R"({"dibsWrites": ")" + o.collection + "\"}");
  CHECK(count_of(log, R"("kind" : "done")") == docs);  // each answer written once
}
