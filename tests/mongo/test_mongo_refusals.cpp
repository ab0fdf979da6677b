// A write the MongoDB server refuses for what it carries (a collection validator: code 121
// DocumentValidationFailure) is refused with the server's reason, never counted as a lost lease:
// the document is failed after one attempt instead of being claimed, refused and re-claimed forever.
//
// The stand-in has no validators (mongomock lacks them): its test-only dibsRefuse command answers
// updates whose result matches a query with the write error a validator would send. Against a
// real mongod (MONGODB_URI) the same query becomes a real validator through collMod.
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/test_hooks.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// `strategy` on two threads.
std::function<void(mongo::mongo_options&)> two_threads(const char* strategy) {
  return [strategy](mongo::mongo_options& o) {
    o.strategy = *mongo::parse_strategy(strategy);
    o.threads = 2;
  };
}
bool real_server() {
  const char* real = std::getenv("MONGODB_URI");
  return real && *real;
}

// Documents whose source is `ip` may not get a target with a `field`: a validator's refusal.
void refuse_targets_of(mongo::mongo_store& s, const std::string& collection, const std::string& ip,
                       const std::string& field) {
  const std::string when = R"({"originatingIp": ")" + ip + R"(", "location.)" + field + R"(": {"$exists": true}})";
  if (real_server())
    mongo::run_command(s, R"({"collMod": ")" + collection + R"(", "validator": {"$nor": [)" + when + "]}}");
  else
    mongo::run_command(s, R"({"dibsRefuse": ")" + collection + R"(", "when": )" + when + "}");
}

using test::utf8_at;
}  // namespace

TEST_CASE("MongoDB: a completion a validator refuses is refused with the server's reason, not a lost lease",
          "[mongo][refused]") {
  for (const char* strategy : {"batch", "update-find", "find-and-modify", "lock-collection"}) {
    DYNAMIC_SECTION(strategy) {
      test::mongo_collection c("refuse", two_threads(strategy));
      auto& [o, s] = c;
      mongo::run_command(s, R"({"insert": ")" + o.collection + R"(", "documents": [)"
                    R"({"_id": 1, "originatingIp": "9.9.9.9", "location": null},)"
                    R"({"_id": 2, "originatingIp": "8.8.8.8", "location": null},)"
                    R"({"_id": 3, "originatingIp": "1.1.1.1", "location": null}]})");
      refuse_targets_of(s, o.collection, "9.9.9.9", "city");

      std::vector<job> got;
      for (int i = 0; i < 5 && got.size() < 3; ++i) {
        auto more = s.claim_blocking({3, "w", 60s, 1s});
        got.insert(got.end(), more.begin(), more.end());
      }
      REQUIRE(got.size() == 3);
      std::vector<completion> batch;
      for (auto& j : got) batch.push_back(completion{j.ref(), R"({"city":"Paris"})"});
      auto r = s.complete_blocking(batch);
      CHECK(r.applied == 2);
      CHECK(r.lost.empty());  // before the fix: the refused one was reported as a lost lease
      REQUIRE(r.refused.size() == 1);
      CHECK(r.refused[0].first == "i32:1");
      CHECK_THAT(r.refused[0].second, Catch::StartsWith("MongoDB refused the write: code 121 (DocumentValidationFailure)"));
      auto st = s.stats_blocking();
      CHECK(st.done == 2);
      CHECK(st.leased_live == 1);  // nothing written, the lease still ours

      // The engine then fails it, fenced, with that reason: one attempt, done with it.
      const auto& refused = *std::find_if(got.begin(), got.end(), [](const job& j) { return j.id == "i32:1"; });
      auto f = s.fail_blocking({failure{refused.ref(), "the store refused the answer: " + r.refused[0].second, 0, 1}});
      CHECK(f.applied == 1);
      CHECK(f.refused.empty());
      st = s.stats_blocking();
      CHECK(st.failed == 1);
      CHECK(st.drained());
      CHECK_THAT(mongo::document_json(s, "i32:1"), Catch::Contains("code 121"));
    }
  }
}

TEST_CASE("MongoDB: a failure record or a release the server refuses is reported refused, the lease kept",
          "[mongo][refused]") {
  for (const char* strategy : {"batch", "lock-collection"}) {
    DYNAMIC_SECTION(strategy) {
      test::mongo_collection c("refuse_fail", two_threads(strategy));
      auto& [o, s] = c;
      mongo::run_command(s, R"({"insert": ")" + o.collection + R"(", "documents": [)"
                    R"({"_id": 1, "originatingIp": "9.9.9.9", "location": null},)"
                    R"({"_id": 2, "originatingIp": "8.8.8.8", "location": null}]})");
      // No failure record and no lastError for 9.9.9.9 (the lock-collection release writes the
      // lock document, which has no such rule: only the failure is refused there).
      const std::string when = R"({"originatingIp": "9.9.9.9", "$or": [{"_dibs.failed": {"$exists": true}}, {"_dibs.lastError": {"$exists": true}}]})";
      if (real_server())
        mongo::run_command(s, R"({"collMod": ")" + o.collection + R"(", "validator": {"$nor": [)" + when + "]}}");
      else
        mongo::run_command(s, R"({"dibsRefuse": ")" + o.collection + R"(", "when": )" + when + "}");
      std::vector<job> got;
      for (int i = 0; i < 5 && got.size() < 2; ++i) {
        auto more = s.claim_blocking({2, "w", 60s, 1s});
        got.insert(got.end(), more.begin(), more.end());
      }
      REQUIRE(got.size() == 2);
      std::vector<failure> fails;
      for (auto& j : got) fails.push_back(failure{j.ref(), "HTTP 404 Not Found", 404, 1});
      auto f = s.fail_blocking(fails);
      CHECK(f.applied == 1);
      CHECK(f.lost.empty());
      REQUIRE(f.refused.size() == 1);
      CHECK(f.refused[0].first == "i32:1");
      CHECK_THAT(f.refused[0].second, Catch::StartsWith("MongoDB refused the write: code 121"));
      auto st = s.stats_blocking();
      CHECK(st.failed == 1);
      CHECK(st.leased_live == 1);  // the refused one keeps its lease (and, with a lock collection, its lock)

      const auto& mine = *std::find_if(got.begin(), got.end(), [](const job& j) { return j.id == "i32:1"; });
      auto r = s.release_blocking({release_item{mine.ref(), 5s, "HTTP 503", 503}});
      CHECK(r.lost.empty());
      if (std::string(strategy) == "batch") {
        CHECK(r.applied == 0);
        REQUIRE(r.refused.size() == 1);
        CHECK(r.refused[0].first == "i32:1");
      } else {
        CHECK(r.applied == 1);  // the lock document takes the release
      }
    }
  }
}

TEST_CASE("MongoDB: an answer over the 16 MiB document limit is refused with the reason, the others written",
          "[mongo][refused]") {
  test::mongo_collection c("huge", two_threads("batch"));
  auto& [o, s] = c;
  s.seed(2, 6);
  auto got = s.claim_blocking({2, "w", 60s, 1s});
  REQUIRE(got.size() == 2);
  const std::string huge = R"({"blob":")" + std::string(17 * 1024 * 1024, 'x') + R"("})";
  // Before: the driver refused the whole bulk write (no write error): the batch failed, and the
  // engine retried it, forever.
  auto r = s.complete_blocking({completion{got[0].ref(), huge}, completion{got[1].ref(), R"({"city":"Paris"})"}});
  CHECK(r.applied == 1);
  CHECK(r.lost.empty());
  REQUIRE(r.refused.size() == 1);
  CHECK(r.refused[0].first == got[0].id);
  CHECK_THAT(r.refused[0].second, Catch::Contains("BSONObjectTooLarge"));
  auto st = s.stats_blocking();
  CHECK(st.done == 1);
  CHECK(st.leased_live == 1);
}

TEST_CASE("MongoDB: dibs enrich fails a document the validator refuses after one attempt, with the server's reason",
          "[mongo][refused][enrich][e2e]") {
  test::mongo_collection c("refuse_e2e");
  auto& [o, s] = c;
  s.seed(50, 4);
  mongo::run_command(s, R"({"insert": ")" + o.collection + R"(", "documents": [{"originatingIp": "9.9.9.9", "location": null}]})");
  refuse_targets_of(s, o.collection, "9.9.9.9", "status");
  const auto dibs_bin = test::dibs_binary();
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();

  const auto log_path = (std::filesystem::temp_directory_path() / (o.collection + ".log")).string();
  std::filesystem::remove(log_path);
  // A short lease (6 s: renewals keep it under a slow stand-in): before the fix the refused
  // document came back after each lease, forever, and the run never drained.
  test::child_process run({dibs_bin, "enrich", "--store", o.uri, "--db", o.db, "--collection", o.collection, "--url",
                           api.base_url() + "/json/{originatingIp}", "--lease", "6s", "--grace", "1s",
                           "--max-attempts", "5", "--no-progress"},
                          false, log_path);
  for (int i = 0; i < 1200 && !s.stats_blocking().drained(); ++i) std::this_thread::sleep_for(50ms);
  const bool drained = s.stats_blocking().drained();
  if (!drained) run.signal(SIGTERM);
  std::string out;
  run.finish(out);
  std::ifstream log_file(log_path);
  const std::string log((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  std::filesystem::remove(log_path);
  INFO(out << log);
  REQUIRE(drained);
  CHECK(test::last_line(out).rfind("summary: completed=50 failed=1 lost_leases=0 released=0 ", 0) == 0);
  CHECK(api.requests() <= 51 + 1);  // one attempt for the refused document (and the pre-flight's, unless its answer was used)
  CHECK(api.requests() >= 51);
  CHECK_THAT(log, Catch::Contains("the store refused the answer: MongoDB refused the write: code 121"));
  CHECK_THAT(log, !Catch::Contains("lease lost"));
  bool seen = false;
  for (auto& doc : mongo::documents(s)) {
    if (utf8_at(doc.get(), "originatingIp") != "9.9.9.9") continue;
    seen = true;
    CHECK_THAT(utf8_at(doc.get(), "_dibs.failed.reason"),
               Catch::StartsWith("the store refused the answer: MongoDB refused the write: code 121 (DocumentValidationFailure)"));
  }
  CHECK(seen);
}
