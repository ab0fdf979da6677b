// The claim protocol against MongoDB (the stand-in, or a real mongod via MONGODB_URI), for every
// claim strategy; plus what only a database shows: several processes claiming at once, the
// server clock, odd source fields, results BSON can't hold.
#include "support/skip.hpp"
#include "support/inherited_sockets.hpp"
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/process.hpp"
#include "support/run_sync.hpp"
#include "support/store_suite.hpp"

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <set>
#include <sstream>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
mongo::mongo_options options_for(mongo::claim_strategy s, const std::string& collection) {
  auto o = test::options_for_collection(collection);
  o.strategy = s;
  o.threads = 2;
  return o;
}

class mongo_harness final : public test::store_harness {
 public:
  explicit mongo_harness(mongo::claim_strategy s) : opts_(options_for(s, test::unique_collection("suite"))) {
    main_ = std::make_shared<mongo::mongo_store>(opts_);
    mongo::drop(*main_);
  }
  std::shared_ptr<store> open() override { return std::make_shared<mongo::mongo_store>(opts_); }
  std::vector<std::string> seed(std::size_t n) override {
    const auto before = ids();
    main_->seed(n, 99);
    std::vector<std::string> out;
    for (auto& id : ids())
      if (!before.count(id)) out.push_back(id);
    return out;
  }
  void let_time_pass(std::chrono::milliseconds d) override {
    std::this_thread::sleep_for(d);  // a real server's clock can't be moved
  }
  std::optional<std::string> target_of(const std::string& id) override { return mongo::target_json(*main_, id); }

  std::set<std::string> ids() {
    std::set<std::string> out;
    auto s = main_->stats_blocking();
    (void)s;
    // Claimable ids are what the suite needs; read them through a throwaway lease-free query.
    auto reply = mongo::run_command(*main_, "{\"find\": \"" + opts_.collection + "\", \"projection\": {\"_id\": 1}}");
    std::size_t pos = 0;
    while ((pos = reply.find("\"$oid\" : \"", pos)) != std::string::npos) {
      pos += 10;
      out.insert(reply.substr(pos, 24));
    }
    return out;
  }

  mongo::mongo_options opts_;
  std::shared_ptr<mongo::mongo_store> main_;
};

const mongo::claim_strategy all_strategies[] = {mongo::claim_strategy::update_find,
                                                mongo::claim_strategy::find_and_modify, mongo::claim_strategy::batch,
                                                mongo::claim_strategy::lock_collection};
}  // namespace

TEST_CASE("MongoDB keeps the claim protocol with update-find", "[mongo][protocol]") {
  mongo_harness h(mongo::claim_strategy::update_find);
  test::run_store_suite(h);
}
TEST_CASE("MongoDB keeps the claim protocol with find-and-modify", "[mongo][protocol]") {
  mongo_harness h(mongo::claim_strategy::find_and_modify);
  test::run_store_suite(h);
}
TEST_CASE("MongoDB keeps the claim protocol with batch claims", "[mongo][protocol]") {
  mongo_harness h(mongo::claim_strategy::batch);
  test::run_store_suite(h);
}
TEST_CASE("MongoDB keeps the claim protocol with a lock collection", "[mongo][protocol]") {
  mongo_harness h(mongo::claim_strategy::lock_collection);
  test::run_store_suite(h);
}

TEST_CASE("several processes claiming at once never share a document", "[mongo][processes]") {
  const auto probe = test::env_or("DIBS_CLAIM_PROBE", DIBS_CLAIM_PROBE_PATH);
  for (auto strategy : all_strategies) {
    DYNAMIC_SECTION(mongo::to_string(strategy)) {
      auto opts = options_for(strategy, test::unique_collection("procs"));
      mongo::mongo_store s(opts);
      mongo::drop(s);
      REQUIRE(s.seed(300, 5) == 300);
      std::vector<std::unique_ptr<test::child_process>> children;
      for (int i = 0; i < 3; ++i)
        children.push_back(std::make_unique<test::child_process>(std::vector<std::string>{
            probe, opts.uri, opts.db, opts.collection, mongo::to_string(strategy), "10", "probe" + std::to_string(i)}));
      std::vector<std::string> all;
      for (auto& c : children) {
        std::string out;
        REQUIRE(c->finish(out) == 0);
        std::istringstream lines(out);
        for (std::string id; std::getline(lines, id);) all.push_back(id);
      }
      std::set<std::string> unique(all.begin(), all.end());
      CHECK(all.size() == unique.size());  // nobody claimed a document someone else held
      CHECK(unique.size() == 300);         // and every document was claimed by someone
      auto st = s.stats_blocking();
      CHECK(st.leased_live == 300);
    }
  }
}

TEST_CASE("claims use the server's clock, not the client's", "[mongo][clock]") {
  auto opts = options_for(mongo::claim_strategy::batch, test::unique_collection("clock"));
  mongo::mongo_store s(opts);
  const char* real = std::getenv("MONGODB_URI");
  // The stand-in's clock runs an hour ahead of this machine's (tests/servers/mongo_standin_ctl.sh).
  const auto skew = real && *real ? 0s : 3600s;
  if (!real || !*real) CHECK(std::chrono::abs(s.clock_offset() - skew) < 2s);
  mongo::drop(s);
  s.seed(1, 1);
  auto got = s.claim_blocking({1, "w", 60s, 1s});
  REQUIRE(got.size() == 1);
  // The lease's `until` is the server's now + the lease: an hour past the client's clock here.
  if (!real || !*real) CHECK(std::chrono::abs(got[0].until - (store_clock::now() + skew + 60s)) < 2s);
  CHECK(std::chrono::abs(got[0].until - (s.server_now() + 60s)) < 2s);
  // And it is what the store recorded.
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(got[0].until.time_since_epoch()).count();
  CHECK_THAT(mongo::document_json(s, got[0].id), Catch::Contains("\"until\" : { \"$date\" : { \"$numberLong\" : \"" + std::to_string(ms) + "\" }"));
}

TEST_CASE("a document whose source is missing or not a string reaches the processor as such", "[mongo]") {
  for (auto strategy : all_strategies) {
    DYNAMIC_SECTION(mongo::to_string(strategy)) {
      auto opts = options_for(strategy, test::unique_collection("odd"));
      mongo::mongo_store s(opts);
      mongo::drop(s);
      mongo::run_command(s, "{\"insert\": \"" + opts.collection +
                    "\", \"documents\": [{\"_id\": 1, \"location\": null}, "
                    "{\"_id\": 2, \"originatingIp\": 42, \"location\": null}, "
                    "{\"_id\": \"three\", \"originatingIp\": \"8.8.8.8\", \"location\": null}]}");
      std::vector<job> got;
      for (int i = 0; i < 5 && got.size() < 3; ++i) {
        auto more = s.claim_blocking({3, "w", 60s, 1s});
        got.insert(got.end(), more.begin(), more.end());
      }
      REQUIRE(got.size() == 3);
      std::map<std::string, job_field> by_id;
      for (auto& j : got) by_id[j.id] = j.fields.at(0);
      CHECK(by_id.at("i32:1").st == job_field::state::missing);
      CHECK(by_id.at("i32:2").st == job_field::state::not_string);
      CHECK(by_id.at("i32:2").type_name == "int32");
      CHECK(by_id.at("str:three").value == "8.8.8.8");
    }
  }
}

TEST_CASE("a result BSON can't hold is refused with the reason, and nothing is written for it", "[mongo]") {
  auto opts = options_for(mongo::claim_strategy::batch, test::unique_collection("nul"));
  mongo::mongo_store s(opts);
  mongo::drop(s);
  s.seed(2, 3);
  auto got = s.claim_blocking({2, "w", 60s, 1s});
  REQUIRE(got.size() == 2);
  auto r = s.complete_blocking({completion{got[0].ref(), R"({"city":"a\u0000b"})"},
                                completion{got[1].ref(), R"({"city":"Paris","n":12345678901,"x":1.5,"a":[1,{"b":null}]})"}});
  CHECK(r.applied == 1);
  REQUIRE(r.refused.size() == 1);
  CHECK(r.refused[0].first == got[0].id);
  CHECK_THAT(r.refused[0].second, Catch::Contains("NUL"));
  auto st = s.stats_blocking();
  CHECK(st.failed == 0);
  CHECK(st.leased_live == 1);  // still ours: the engine records the failure, fenced
  CHECK(st.done == 1);
  const auto doc = mongo::document_json(s, got[1].id);
  CHECK_THAT(doc, Catch::Contains("\"n\" : { \"$numberLong\" : \"12345678901\" }"));
  CHECK_THAT(doc, Catch::Contains("\"x\" : { \"$numberDouble\" : \"1.5\" }"));
  auto f = s.fail_blocking({failure{got[0].ref(), "the store refused the answer: " + r.refused[0].second, 0, 1}});
  CHECK(f.applied == 1);
  CHECK(s.stats_blocking().failed == 1);
  CHECK_THAT(mongo::document_json(s, got[0].id), Catch::Contains("NUL"));
}

TEST_CASE("lock-collection: a lock left behind by a holder killed after its write is not counted as a lease", "[mongo]") {
  // The holder wrote the document, then died before removing its lock (the TTL index would take
  // it away within the hour). Counted as a lease, that lock kept every worker of the run waiting
  // for a document that was already done: the run never ended (the chaos rounds found it).
  auto opts = options_for(mongo::claim_strategy::lock_collection, test::unique_collection("orphan"));
  mongo::mongo_store s(opts);
  mongo::drop(s);
  mongo::run_command(s, "{\"insert\": \"" + opts.collection +
                "\", \"documents\": [{\"_id\": 1, \"originatingIp\": \"8.8.8.8\", \"location\": null}, "
                "{\"_id\": 2, \"originatingIp\": \"8.8.4.4\", \"location\": null}, "
                "{\"_id\": 3, \"originatingIp\": \"1.1.1.1\", \"location\": null}]}");
  std::vector<job> got;
  for (int i = 0; i < 5 && got.size() < 2; ++i) {
    auto more = s.claim_blocking({2 - got.size(), "w", 60s, 1s});
    got.insert(got.end(), more.begin(), more.end());
  }
  REQUIRE(got.size() == 2);
  REQUIRE(got[1].id.rfind("i32:", 0) == 0);  // the ids' text form: "i32:N"
  CHECK(s.complete_blocking({completion{got[0].ref(), R"({"city":"a"})"}}).applied == 1);
  // The second holder's document write landed; its lock removal never came.
  mongo::run_command(s, "{\"update\": \"" + opts.collection + "\", \"updates\": [{\"q\": {\"_id\": " + got[1].id.substr(4) +
                "}, \"u\": {\"$set\": {\"location\": {\"city\": \"b\"}}}}]}");
  const auto st = s.stats_blocking();
  CHECK(st.done == 2);
  CHECK(st.leased_live == 0);
  CHECK(st.leased_expired == 0);
  CHECK(st.pending == 1);
}

TEST_CASE("the MongoDB store's connections are not inherited by a child process", "[mongo]") {
  const auto before = test::open_sockets();
  mongo::mongo_store s(options_for(mongo::claim_strategy::batch, test::unique_collection("cloexec")));
  REQUIRE(s.stats_blocking().pending == 0);
  REQUIRE(test::open_sockets().size() > before.size());
  CHECK(test::inheritable_sockets_since(before) == std::vector<std::string>{});
  mongo::drop(s);
}

TEST_CASE("a bad or unreachable MongoDB URI fails at start with a clear message", "[mongo]") {
  mongo::mongo_options o;
  o.uri = "mongodb://user:secret@";
  CHECK_THROWS_WITH(mongo::mongo_store(o), Catch::Contains("bad store URI") && !Catch::Contains("secret"));
  o.uri = "mongodb://user:secret@127.0.0.1:1/?serverSelectionTimeoutMS=300";
  try {
    mongo::mongo_store s(o);
    FAIL("connected to a closed port");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("cannot reach MongoDB at mongodb://user:") && !Catch::Contains("secret"));
    CHECK_THAT(e.what(), Catch::EndsWith("check that the server is running and that store names it (host, port, replicaSet)"));
  }
}

TEST_CASE("without change streams (the stand-in, a standalone server) watch says so instead of hanging", "[mongo][follow]") {
  auto opts = options_for(mongo::claim_strategy::batch, test::unique_collection("nowatch"));
  mongo::mongo_store s(opts);
  mongo::drop(s);
  const bool replica_set = mongo::run_command(s, R"({"hello": 1})").find("\"setName\"") != std::string::npos;
  if (replica_set) test::skip("MONGODB_URI names a replica set member: it has change streams");
  // --follow then polls, which the --follow test covers.
  CHECK_FALSE(s.watch([] {}));
}

TEST_CASE("a change stream wakes --follow where the server has one", "[mongo][follow]") {
  auto opts = options_for(mongo::claim_strategy::batch, test::unique_collection("watch"));
  mongo::mongo_store s(opts);
  mongo::drop(s);
  // A real server has change streams exactly when it is a replica set member (hello: setName).
  const bool replica_set = mongo::run_command(s, R"({"hello": 1})").find("\"setName\"") != std::string::npos;
  if (!replica_set) test::skip("no replica set here (the stand-in or a standalone mongod): no change streams to test");
  std::atomic<int> changes{0};
  REQUIRE(s.watch([&] { ++changes; }));
  s.seed(3, 1);
  for (int i = 0; i < 200 && changes.load() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(changes.load() >= 3);
  s.stop_watching();
}

TEST_CASE("seeding twice into one collection never collides: fresh ObjectIds, every document kept", "[mongo]") {
  mongo_harness h(mongo::claim_strategy::batch);
  const auto first = h.seed(50);
  const auto second = h.seed(50);
  CHECK(first.size() == 50);
  CHECK(second.size() == 50);  // 50 new ids, none equal to an earlier one
  CHECK(h.ids().size() == 100);
  CHECK(h.main_->stats_blocking().pending == 100);
}

TEST_CASE("a claim that takes documents one round trip each stops once it has run an eighth of the lease",
          "[mongo][claim][lease]") {
  // Round trips of 100 ms (a busy server) and leases of 1 s: the first document's lease runs while
  // the claim takes more, and a claim of 10 that outlasted the lease handed over documents other
  // workers could already take. An eighth of the lease (125 ms) allows two round trips' worth.
  for (const auto& [strategy, command] : {std::pair{mongo::claim_strategy::find_and_modify, "findAndModify"},
                                          std::pair{mongo::claim_strategy::update_find, "update"}}) {
    DYNAMIC_SECTION(command) {
      mongo::mongo_store s(options_for(strategy, test::unique_collection("budget")));
      mongo::drop(s);
      REQUIRE(s.seed(10, 31) == 10);
      try {
        mongo::run_command(s, std::string(R"({"dibsDelay": ")") + command + R"(", "ms": 100})");
      } catch (const mongo::mongo_error&) {
        test::skip("the server can't be slowed on demand (a real mongod)");
      }
      const auto got = s.claim_blocking({10, "slow", 1000ms, 0ms});
      mongo::run_command(s, std::string(R"({"dibsDelay": ")") + command + R"(", "ms": 0})");
      CHECK(got.size() >= 1);
      CHECK(got.size() <= 2);
      mongo::drop(s);
    }
  }
}
