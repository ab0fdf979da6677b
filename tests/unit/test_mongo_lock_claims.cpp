// The lock-collection claim's decisions (adapters/mongo/lock_claim_decisions.hpp) and the id
// sampler's pivot (adapters/mongo/id_sampler.hpp), without a server.
#include "support/fixed_time.hpp"
#include <adapters/mongo/id_sampler.hpp>
#include <adapters/mongo/lock_claim_decisions.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dibs;
using namespace dibs::mongo;

namespace {
using test::t0;
using std::chrono::seconds;
}  // namespace

TEST_CASE("MongoDB: lock targets: free candidates get a lock, expired locks are taken over, live ones skipped", "[mongo][lock-claim]") {
  const std::vector<std::string> cands{"a", "b", "c", "d", "e"};
  const std::unordered_map<std::string, lock_expiry> locked{
      {"b", {t0 + seconds(30)}},  // live
      {"c", {t0 - seconds(10)}},  // expired beyond the grace
      {"d", {t0 - seconds(1)}},   // expired, but within the grace: not yet
  };
  const auto cut = cutoffs_at(t0, seconds(2));
  auto t = choose_lock_targets(cands, locked, cut, 10);
  CHECK(t.free == std::vector<std::size_t>{0, 4});
  CHECK(t.expired == std::vector<std::size_t>{2});
  CHECK_FALSE(t.empty());

  // `max` counts both kinds, in candidate order.
  t = choose_lock_targets(cands, locked, cut, 2);
  CHECK(t.free == std::vector<std::size_t>{0});
  CHECK(t.expired == std::vector<std::size_t>{2});

  CHECK(choose_lock_targets({"b", "d"}, locked, cut, 10).empty());
}

TEST_CASE("MongoDB: a lock given back for a retry is taken once due, without the grace", "[mongo][lock-claim]") {
  std::vector<bson_ptr> locks;
  // Both ran out a second ago: "a" given back for a retry (token 0), "b" still held by a worker.
  locks.push_back(from_json(R"({"_id": "a", "token": {"$numberLong": "0"}, "until": {"$date": {"$numberLong": "1699999999000"}}})"));
  locks.push_back(from_json(R"({"_id": "b", "token": {"$numberLong": "77"}, "until": {"$date": {"$numberLong": "1699999999000"}}})"));
  const auto e = lock_expiries(locks);
  CHECK(e.at("str:a").given_back);
  CHECK_FALSE(e.at("str:b").given_back);
  const auto t = choose_lock_targets({"str:a", "str:b"}, e, cutoffs_at(t0, seconds(2)), 10);
  CHECK(t.expired == std::vector<std::size_t>{0});
  CHECK(t.free.empty());
}

TEST_CASE("MongoDB: a lock without until counts as expired long ago", "[mongo][lock-claim]") {
  std::vector<bson_ptr> locks;
  locks.push_back(from_json(R"({"_id": {"$numberInt": "1"}, "until": {"$date": {"$numberLong": "1700000000000"}}})"));
  locks.push_back(from_json(R"({"_id": {"$numberInt": "2"}, "by": "w"})"));
  const auto e = lock_expiries(locks);
  REQUIRE(e.size() == 2);
  CHECK(e.at("i32:1").until == t0);
  CHECK(e.at("i32:2").until == store_time{});
}

TEST_CASE("MongoDB: an expired lock taken --max-attempts times is not taken over again, its document is failed",
          "[mongo][lock-claim]") {
  std::vector<bson_ptr> locks;
  // until t0 (expired), taken 3 times; expired, taken twice; live, taken 3 times.
  locks.push_back(from_json(R"({"_id": "a", "until": {"$date": {"$numberLong": "1700000000000"}}, "attempts": 3})"));
  locks.push_back(from_json(R"({"_id": "b", "until": {"$date": {"$numberLong": "1700000000000"}}, "attempts": 2})"));
  locks.push_back(from_json(R"({"_id": "c", "until": {"$date": {"$numberLong": "1700000060000"}}, "attempts": 3})"));
  const auto threshold = cutoffs_at(t0 + seconds(12), seconds(2));
  const auto exhausted = exhausted_locks(locks, threshold, 3);
  CHECK(exhausted == std::unordered_set<std::string>{"str:a"});
  CHECK(exhausted_locks(locks, threshold, 0).empty());  // no limit
  const auto t = choose_lock_targets({"str:a", "str:b", "str:c", "str:d"}, lock_expiries(locks), threshold, 10, exhausted);
  CHECK(t.expired == std::vector<std::size_t>{1});  // b; never a
  CHECK(t.free == std::vector<std::size_t>{3});
}

TEST_CASE("MongoDB: a duplicate key on a lock insert is a conflict, not a failed claim", "[mongo][lock-claim]") {
  auto raced = from_json(R"({"insertedCount": 1, "writeErrors": [
      {"index": 0, "code": 11000, "errmsg": "E11000 duplicate key error"},
      {"index": 2, "code": 11000, "errmsg": "E11000 duplicate key error"}]})");
  auto v = judge_lock_insert(raced.get(), false);
  CHECK(v.raced == 2);
  CHECK_FALSE(v.failed);

  auto refused = from_json(R"({"insertedCount": 0, "writeErrors": [{"index": 0, "code": 121, "errmsg": "validation"}]})");
  v = judge_lock_insert(refused.get(), false);
  CHECK(v.raced == 0);
  CHECK(v.failed);

  auto clean = from_json(R"({"insertedCount": 3})");
  v = judge_lock_insert(clean.get(), true);
  CHECK(v.raced == 0);
  CHECK_FALSE(v.failed);

  auto nothing = from_json(R"({})");  // the whole insert failed (connection): no write errors to read
  CHECK(judge_lock_insert(nothing.get(), false).failed);
}

TEST_CASE("MongoDB: stale locks: ours, on documents that are no longer open", "[mongo][lock-claim]") {
  const std::unordered_map<std::string, int> held{{"a", 1}, {"b", 2}, {"c", 1}};
  auto stale = stale_locks(held, {"a", "c"}, "w1", 42);
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].id == "b");
  CHECK(stale[0].by == "w1");
  CHECK(stale[0].token == 42);
  CHECK(stale_locks(held, {"a", "b", "c"}, "w1", 42).empty());
}

TEST_CASE("MongoDB: ObjectIds as 96-bit numbers, and the id sampler's pivot between two of them", "[mongo][lock-claim]") {
  bson_oid_t lo_oid, hi_oid;
  bson_oid_init_from_string(&lo_oid, "655e0a000000000000000010");
  bson_oid_init_from_string(&hi_oid, "655e0a000000000000000020");
  const auto lo = oid_number(lo_oid), hi = oid_number(hi_oid);
  CHECK(hi - lo == 0x10);
  const auto back = oid_from_number(lo);
  CHECK(bson_oid_equal(&back, &lo_oid));

  auto pivot = [&](u128 r) { return oid_number(pivot_between(lo, hi, r)); };
  CHECK(pivot(0) == lo);
  CHECK(pivot(0x10) == hi);
  CHECK(pivot(0x11) == lo);  // wraps: never past the largest id
  CHECK(pivot(~u128{0}) >= lo);
  CHECK(pivot(~u128{0}) <= hi);
}
