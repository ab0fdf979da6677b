// The lock-collection strategy's fence: its lock lives in another collection, so a completion or a
// failure checks the lock first and writes the document after. What keeps a document to one final
// write is the document write's own filter (open_document_filter). Two interleavings broke it
// (`make chaos`, MongoDB, about one round in 20: "written-twice"):
// - a failure record whose answer was lost on the way (the link reset after the server applied it)
//   was sent again by the flusher, its lock still there and ours, and written a second time;
// - a holder paused between its lock check and its write wrote over a document that the lock's
//   next holder had finished meanwhile (a failed document still has a null target).
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/skip.hpp"

#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
constexpr const char* app = "dibs-lock-fence-test";

std::function<void(mongo::mongo_options&)> lock_collection(bool named) {
  return [named](mongo::mongo_options& o) {
    o.strategy = mongo::claim_strategy::lock_collection;
    o.threads = 1;
    if (named) o.uri = test::with_option(o.uri, std::string("appname=") + app);
  };
}

void insert_one(test::mongo_collection& c) {
  mongo::run_command(c.s, R"({"insert": ")" + c.o.collection +
                              R"(", "documents": [{"_id": 1, "originatingIp": "8.8.8.8", "location": null}]})");
}

job claim_one(mongo::mongo_store& s) {
  for (int i = 0; i < 5; ++i) {
    auto got = s.claim_blocking({1, "w", 60s, 1s});
    if (!got.empty()) return got[0];
  }
  FAIL("the document was not claimed");
  return {};
}

// How many times the write log saw document 1 finished (done or failed).
int final_writes(mongo::mongo_store& s, const std::string& collection) {
  const auto log = mongo::run_command(s, R"({"dibsWrites": ")" + collection + R"("})");
  int n = 0;
  for (const char* kind : {R"("kind" : "done")", R"("kind" : "fail")"})
    for (auto at = log.find(kind); at != std::string::npos; at = log.find(kind, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("lock-collection: a failure record sent again after its answer was lost is not written a second time",
          "[mongo][lock-collection][fence]") {
  test::mongo_collection c("lockfence", lock_collection(true));
  try {
    mongo::run_command(c.s, R"({"dibsWatch": ")" + c.o.collection + R"(", "field": "location", "lock": "_dibs"})");
  } catch (const mongo::mongo_error&) {
    test::skip("the server keeps no write log and can't lose an answer on demand (a real mongod)");
  }
  insert_one(c);
  const auto j = claim_one(c.s);
  // The server carries out the next update, then closes the connection without answering.
  mongo::run_command(c.s, std::string(R"({"dibsHangUp": ")") + app + R"(", "commands": ["update"], "n": 1, "after": true})");
  const failure f{j.ref(), "the API has no data: private range", 200, 1};
  CHECK_THROWS(c.s.fail_blocking({f}));  // the flusher keeps the failure and sends it again
  CHECK(final_writes(c.s, c.o.collection) == 1);
  const auto again = c.s.fail_blocking({f});
  CHECK(again.refused.empty());
  CHECK(again.applied == 0);  // (and counted among the lost: a batch's misses are counted exactly)
  // Before the fix the second sending matched the failed document (target still null) and wrote
  // it again: two final writes.
  CHECK(final_writes(c.s, c.o.collection) == 1);
  const auto st = c.s.stats_blocking();
  CHECK(st.failed == 1);
  CHECK(st.leased_live + st.leased_expired == 0);  // and the lock is gone
}

TEST_CASE("lock-collection: a holder whose document was finished by another writer since its lock check writes nothing",
          "[mongo][lock-collection][fence]") {
  // The other writer's write is made here by hand, as a holder paused between its lock check and
  // its write would have landed it; the holder under test then writes with its lock still live.
  for (const char* first : {"failed", "done"}) {
    DYNAMIC_SECTION("the document was " << first << " first") {
      test::mongo_collection c("lockfence", lock_collection(false));
      insert_one(c);
      const auto j = claim_one(c.s);
      const std::string finish = std::string(first) == "failed"
                                     ? R"({"$set": {"_dibs.failed": {"reason": "stale", "httpStatus": 0, "attempts": 1}}})"
                                     : R"({"$set": {"location": {"city": "stale"}}})";
      mongo::run_command(c.s, R"({"update": ")" + c.o.collection + R"(", "updates": [{"q": {"_id": 1}, "u": )" + finish + "}]}");
      const auto before = mongo::document_json(c.s, "i32:1");

      const auto done = c.s.complete_blocking({completion{j.ref(), R"({"city":"Paris"})"}});
      CHECK(done.applied == 0);
      CHECK(done.lost.size() == 1);
      const auto failed = c.s.fail_blocking({failure{j.ref(), "HTTP 500", 500, 1}});
      CHECK(failed.applied == 0);
      // Before the fix a failed document took the completion (its target is null): it became done,
      // its failure erased, after the other writer had finished it.
      CHECK(mongo::document_json(c.s, "i32:1") == before);
    }
  }
}
