// Which items of a fenced MongoDB batch write lost their lease, decided from the documents read
// back (adapters/mongo/lease_verdicts.hpp), without a server.
#include "support/fixed_time.hpp"
#include <adapters/mongo/lease_verdicts.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dibs;
using namespace dibs::mongo;

namespace {

using test::t0;

std::string date(store_time t) {
  return R"({"$date": {"$numberLong": ")" +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count()) + "\"}}";
}

// A document with int32 id `n` (id text "i32:<n>").
bson_ptr doc(int n, const std::string& rest) {
  return from_json(R"({"_id": {"$numberInt": ")" + std::to_string(n) + "\"}" + (rest.empty() ? "" : ", " + rest) + "}");
}
std::string leased(const std::string& by, int token, store_time until) {
  return R"("location": null, "_dibs": {"by": ")" + by + R"(", "token": {"$numberLong": ")" + std::to_string(token) +
         R"("}, "until": )" + date(until) + ", \"attempts\": 1}";
}
const std::string done = R"("location": {"city": "Oslo"})";
const std::string failed_lock = R"("location": null, "_dibs": {"attempts": 3, "failed": {"reason": "HTTP 404"}})";

lease_ref ref(int n, const std::string& by = "w1", std::uint64_t token = 7) { return {"i32:" + std::to_string(n), by, token}; }

std::vector<bson_ptr> docs_of(std::initializer_list<std::pair<int, std::string>> list) {
  std::vector<bson_ptr> out;
  for (const auto& [n, rest] : list) out.push_back(doc(n, rest));
  return out;
}

}  // namespace

TEST_CASE("MongoDB: lease states are read from the lease field of documents, at the top of lock documents", "[mongo][verdicts]") {
  field_names f{"ip", "geo", "lease"};
  std::vector<bson_ptr> docs;
  docs.push_back(doc(1, R"("geo": null, "lease": {"by": "w1", "token": {"$numberLong": "7"}, "until": )" + date(t0) + "}"));
  docs.push_back(doc(2, R"("geo": {"city": "Oslo"})"));
  docs.push_back(doc(3, R"("geo": null, "lease": {"failed": {"reason": "x"}})"));
  const auto s = document_states(docs, f);
  REQUIRE(s.size() == 3);
  CHECK(s.at("i32:1").has_token);
  CHECK(s.at("i32:1").token == 7);
  CHECK(s.at("i32:1").by == "w1");
  CHECK(s.at("i32:1").until == t0);
  CHECK_FALSE(s.at("i32:1").target_set);
  CHECK(s.at("i32:2").target_set);
  CHECK_FALSE(s.at("i32:2").has_token);
  CHECK(s.at("i32:3").failed);

  std::vector<bson_ptr> locks;
  locks.push_back(doc(4, R"("by": "w2", "token": {"$numberLong": "9"}, "until": )" + date(t0)));
  const auto l = lock_states(locks);
  CHECK(l.at("i32:4").token == 9);
  CHECK(l.at("i32:4").by == "w2");
  CHECK(l.at("i32:4").until == t0);
}

TEST_CASE("MongoDB: what each fenced write looks like once applied", "[mongo][verdicts]") {
  const auto r = ref(1);
  lease_state ours{true, 7, "w1", t0, false, false};
  lease_state theirs{true, 8, "w2", t0, false, false};
  lease_state finished{false, 0, "", {}, true, false};
  lease_state failed_state{false, 0, "", {}, false, true};
  lease_state released{false, 0, "", {}, false, false};

  CHECK(looks_applied(fenced_write::completion, r, finished));
  CHECK_FALSE(looks_applied(fenced_write::completion, r, ours));
  CHECK_FALSE(looks_applied(fenced_write::completion, r, failed_state));
  CHECK(looks_applied(fenced_write::lock_completion, r, finished));
  CHECK_FALSE(looks_applied(fenced_write::lock_completion, r, released));
  CHECK(looks_applied(fenced_write::renewal, r, ours));
  CHECK_FALSE(looks_applied(fenced_write::renewal, r, theirs));
  CHECK_FALSE(looks_applied(fenced_write::renewal, r, lease_state{true, 7, "w2", t0, false, false}));  // same token, other worker
  CHECK(looks_applied(fenced_write::release, r, released));
  CHECK(looks_applied(fenced_write::release, r, ours));
  // A delayed release keeps the holder's name with the token given back for a retry (0).
  CHECK(looks_applied(fenced_write::release, r, lease_state{true, 0, r.by, t0, false, false}));
  CHECK_FALSE(looks_applied(fenced_write::release, r, lease_state{true, 0, "w2", t0, false, false}));
  CHECK_FALSE(looks_applied(fenced_write::release, r, theirs));
  CHECK(looks_applied(fenced_write::failure, r, failed_state));
  CHECK_FALSE(looks_applied(fenced_write::failure, r, ours));
}

TEST_CASE("MongoDB: lost leases: the shortfall is filled with the surely lost first, then the others in order", "[mongo][verdicts]") {
  field_names f;
  // 1 and 3 look completed (by us or by a later holder), 2 is leased by someone else, 4 is gone.
  const auto states = document_states(docs_of({{1, done}, {2, leased("w2", 8, t0)}, {3, done}}), f);
  const std::vector<lease_ref> sent{ref(1), ref(2), ref(3), ref(4)};

  CHECK(attribute_lost(fenced_write::completion, sent, 4, states).empty());
  CHECK(attribute_lost(fenced_write::completion, sent, 5, states).empty());
  CHECK(attribute_lost(fenced_write::completion, sent, 3, states) == std::vector<std::string>{"i32:2"});
  CHECK(attribute_lost(fenced_write::completion, sent, 2, states) == std::vector<std::string>{"i32:2", "i32:4"});
  CHECK(attribute_lost(fenced_write::completion, sent, 1, states) == std::vector<std::string>{"i32:2", "i32:4", "i32:1"});
  CHECK(attribute_lost(fenced_write::completion, sent, 0, states).size() == 4);
}

TEST_CASE("MongoDB: lost leases of a renewal: a lease held by another token or worker is lost", "[mongo][verdicts]") {
  field_names f;
  const auto states =
      document_states(docs_of({{1, leased("w1", 7, t0)}, {2, leased("w2", 7, t0)}, {3, leased("w1", 9, t0)}}), f);
  const std::vector<lease_ref> sent{ref(1), ref(2), ref(3)};
  CHECK(attribute_lost(fenced_write::renewal, sent, 1, states) == std::vector<std::string>{"i32:2", "i32:3"});
  CHECK(something_lost(3, 1));
  CHECK_FALSE(something_lost(3, 3));
}

TEST_CASE("MongoDB: lost leases of a failure record: only a recorded failure without a lease looks applied", "[mongo][verdicts]") {
  field_names f;
  const auto states = document_states(docs_of({{1, failed_lock}, {2, done}}), f);
  const std::vector<lease_ref> sent{ref(1), ref(2)};
  CHECK(attribute_lost(fenced_write::failure, sent, 1, states) == std::vector<std::string>{"i32:2"});
}

TEST_CASE("MongoDB: held locks: ours, and live at the given time when one is given", "[mongo][verdicts]") {
  std::vector<bson_ptr> locks;
  locks.push_back(doc(1, R"("by": "w1", "token": {"$numberLong": "7"}, "until": )" + date(t0 + std::chrono::seconds(5))));
  locks.push_back(doc(2, R"("by": "w1", "token": {"$numberLong": "7"}, "until": )" + date(t0 - std::chrono::seconds(1))));
  locks.push_back(doc(3, R"("by": "w2", "token": {"$numberLong": "8"}, "until": )" + date(t0 + std::chrono::seconds(5))));
  const auto states = lock_states(locks);
  const std::vector<lease_ref> refs{ref(1), ref(2), ref(3), ref(4)};

  std::vector<std::string> lost;
  CHECK(held_locks(refs, states, t0, lost) == std::vector<std::size_t>{0});
  CHECK(lost == std::vector<std::string>{"i32:2", "i32:3", "i32:4"});

  lost.clear();
  CHECK(held_locks(refs, states, std::nullopt, lost) == std::vector<std::size_t>{0, 1});  // expiry not asked
  CHECK(lost == std::vector<std::string>{"i32:3", "i32:4"});

  lost.clear();
  CHECK(held_locks(refs, states, t0 + std::chrono::seconds(5), lost) == std::vector<std::size_t>{0});  // until == now: live
}
