// Several `dibs enrich --claim batch` processes (two shards each) claiming from one collection at
// once: every document is called once and done once, and no claim loses a document to another
// (each statement of the claim's bulk write picks and leases its own document).
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/mongo/test_hooks.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include "support/text.hpp"

#include <regex>

using namespace dibs;

namespace {
using test::figure;
}  // namespace

TEST_CASE("three dibs enrich --claim batch processes drain one collection: each document once, no claim conflicts",
          "[mongo][enrich][scale]") {
  test::mongo_collection c("scale");
  auto& [o, s] = c;
  const auto dibs_bin = test::dibs_binary();
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const long docs = 600;
  std::string out;
  test::child_process seed({dibs_bin, "seed", "--store", o.uri, "--db", o.db, "--collection", o.collection, "--docs",
                            std::to_string(docs)});
  REQUIRE(seed.finish(out) == 0);

  std::vector<std::unique_ptr<test::child_process>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(std::make_unique<test::child_process>(std::vector<std::string>{
        dibs_bin, "enrich", "--store", o.uri, "--db", o.db, "--collection", o.collection, "--claim", "batch", "--url",
        api.base_url() + "/json/{originatingIp}", "--shards", "2", "--concurrency", "100", "--claim-batch", "50",
        "--no-progress", "--no-preflight"}));
  long completed = 0;
  for (auto& w : workers) {
    out.clear();
    const int rc = w->finish(out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(figure(out, "claim conflicts (\\d+)") == 0);
    completed += figure(out, "summary: completed=(\\d+) ");
  }
  CHECK(completed == docs);
  CHECK(api.requests() == static_cast<std::uint64_t>(docs));  // each document called once
  const auto st = s.stats_blocking();
  CHECK(st.done == static_cast<std::uint64_t>(docs));
  CHECK(st.drained());
  long finished = 0;
  for (auto& doc : mongo::documents(s)) {
    bson_iter_t it;
    // Done, with no lease left behind (the lease field is removed by the completion).
    if (bson_iter_init_find(&it, doc.get(), "location") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
        !bson_iter_init_find(&it, doc.get(), "_dibs"))
      ++finished;
  }
  CHECK(finished == docs);
}
