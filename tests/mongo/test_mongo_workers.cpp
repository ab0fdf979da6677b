// Workers you can name and release, over MongoDB (the stand-in, or MONGODB_URI), with the lease
// in the document and in the lock collection: lease holders, the operator's release, the fence.
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/worker_release.hpp"

#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("MongoDB lists lease holders and releases a worker's leases, fenced, with both lease layouts",
          "[mongo][workers]") {
  for (auto strategy : {mongo::claim_strategy::batch, mongo::claim_strategy::lock_collection}) {
    DYNAMIC_SECTION((strategy == mongo::claim_strategy::batch ? "in the document" : "in the lock collection")) {
      test::mongo_collection c("workers", [&](mongo::mongo_options& o) { o.strategy = strategy; });
      REQUIRE(c.s.seed(10, 3) == 10);
      test::check_worker_release(c.s);
    }
  }
}
