// dibs's own records (include/dibs/stores/own_records.hpp) on every store that keeps them: the
// few primitives the shared rate, the budgets and the kept answers are written once over, each
// against the real server, and the one feature written over them since (the answers' expiry).
#include "support/backend.hpp"

#include <adapters/stores/answer_sweep.hpp>
#include <adapters/stores/open_answer_store.hpp>
#include <dibs/stores/own_records.hpp>

#include <catch2/catch.hpp>

#include <chrono>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::db;

// A kind of record of this test's own, in a table (collection) named after it, gone at the end.
struct scratch_kind {
  test::backend_table s;
  record_kind kind;
  std::shared_ptr<record_table> table;
  explicit scratch_kind(const std::string& prefix, bool stamped = false) : s(db.fresh(prefix)) {
    kind = {db.unique_name("dibs_rec"), "rec_key", {"first", "second"}, {"body"}, stamped ? "kept_at" : ""};
    table = std::dynamic_pointer_cast<own_records>(s.store)->open_records(kind);
  }
  ~scratch_kind() {
    try {
      if (db.sql) s.execute("DROP TABLE IF EXISTS " + kind.table);
      else s.command(R"({"drop": ")" + kind.table + R"("})");
    } catch (...) {
    }
  }
  // The record of `key` kept two days earlier than it was.
  void age(const std::string& key) {
    if (db.sql)
      s.execute("UPDATE " + kind.table + " SET kept_at = kept_at - INTERVAL '48' HOUR WHERE rec_key = '" + key + "'");
    else
      s.command(R"({"update": ")" + kind.table + R"(", "updates": [{"q": {"_id": ")" + key +
                R"("}, "u": {"$inc": {"kept_at_ms": -172800000}}}]})");
  }
};
}  // namespace

BACKEND_TEST_CASE("a record is made by the first swap over none, and a second swap over none loses", "[records]") {
  scratch_kind k("records_new");
  const auto before = k.table->read("a");
  CHECK_FALSE(before.record);
  // The store's clock: within a day of this machine's (a store reads its own, never zero).
  const auto here = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(std::llabs(before.now_us - here) < 86'400'000'000LL);
  CHECK(k.table->swap("a", std::nullopt, {5, 7}));
  CHECK_FALSE(k.table->swap("a", std::nullopt, {9, 9}));  // another process made it first
  const auto after = k.table->read("a");
  REQUIRE(after.record);
  CHECK(after.record->key == "a");
  CHECK(after.record->numbers == std::vector<std::int64_t>{5, 7});
}

BACKEND_TEST_CASE("a swap over numbers another process changed since writes nothing", "[records]") {
  scratch_kind k("records_stale");
  REQUIRE(k.table->swap("a", std::nullopt, {1, 2}));
  CHECK(k.table->swap("a", std::vector<std::int64_t>{1, 2}, {3, 2}));
  CHECK_FALSE(k.table->swap("a", std::vector<std::int64_t>{1, 2}, {8, 8}));  // decided from a stale read
  CHECK(k.table->read("a").record->numbers == std::vector<std::int64_t>{3, 2});
  // Numbers past 2^53 compare exactly (MySQL compares a quoted number with a BIGINT as a double).
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  REQUIRE(k.table->swap("a", std::vector<std::int64_t>{3, 2}, {big, -4}));
  CHECK_FALSE(k.table->swap("a", std::vector<std::int64_t>{big - 1, -4}, {0, 0}));
  CHECK(k.table->swap("a", std::vector<std::int64_t>{big, -4}, {0, 0}));
  CHECK(k.table->read("a").record->numbers == std::vector<std::int64_t>{0, 0});
  CHECK(k.table->swap("a", std::vector<std::int64_t>{0, 0}, {1, 0}));  // from zeros (a missing field reads 0)
}

BACKEND_TEST_CASE("records are put whole, replaced by key, listed by key, and their text comes back byte for byte", "[records]") {
  scratch_kind k("records_put", true);
  const std::string odd = "東京 'quoted' \"double\" back\\slash $1 $2 ;-- 🙂";
  REQUIRE(k.table->put({{"b", {1, 2}, {odd}, {}}, {"a", {3, 4}, {"first"}, {}}}));
  REQUIRE(k.table->put({{"a", {5, 6}, {"second"}, {}}}));
  const auto all = k.table->list();
  REQUIRE(all.size() == 2);
  CHECK(all[0].key == "a");
  CHECK(all[0].numbers == std::vector<std::int64_t>{5, 6});
  CHECK(all[0].texts == std::vector<std::string>{"second"});
  CHECK(all[1].texts == std::vector<std::string>{odd});
  const auto b = k.table->read("b");
  REQUIRE(b.record);
  CHECK(b.record->texts == std::vector<std::string>{odd});
  CHECK(b.record->age >= 0us);
  CHECK(b.record->age < 1h);  // stamped now by the store's clock
}

BACKEND_TEST_CASE("records stamped longer ago than an age are removed, newer ones stay", "[records]") {
  scratch_kind k("records_old", true);
  REQUIRE(k.table->put({{"old", {}, {"x"}, {}}, {"new", {}, {"y"}, {}}}));
  k.age("old");
  CHECK(k.table->read("old").record->age > 47h);
  CHECK(k.table->remove_older(24h) == 1);
  CHECK_FALSE(k.table->read("old").record);
  CHECK(k.table->read("new").record);
  CHECK(k.table->remove_older(24h) == 0);
}

BACKEND_TEST_CASE("--answer-expiry's sweep removes the answers kept longer ago, and keeps the others", "[records][reuse]") {
  auto s = db.fresh("answer_expiry");
  auto answers = open_answer_store(s.store);
  REQUIRE(answers);
  // Keys of this test's own: other tests share dibs_answers.
  const answer_key old_key{db.unique_name("old_answer"), "GET /old"}, new_key{db.unique_name("new_answer"), "GET /new"};
  answers->keep({{old_key, R"({"v":1})"}, {new_key, R"({"v":2})"}});
  // Kept 60 days ago: older than this sweep's 30 days, and than any other test ages its answers.
  if (db.sql)
    s.execute("UPDATE dibs_answers SET stored_at = stored_at - INTERVAL '1440' HOUR WHERE digest = '" + old_key.digest + "'");
  else
    s.command(R"({"update": "dibs_answers", "updates": [{"q": {"_id": ")" + old_key.digest +
              R"("}, "u": {"$inc": {"stored_at_ms": -5184000000}}}]})");
  CHECK(answers->find(old_key, std::chrono::hours(24 * 365)));
  const auto removed = remove_expired_answers(s.store, std::chrono::hours(24 * 30));
  REQUIRE(removed);
  CHECK(*removed >= 1);
  CHECK_FALSE(answers->find(old_key, std::chrono::hours(24 * 365)));
  const auto kept = answers->find(new_key, std::chrono::hours(1));
  REQUIRE(kept);
  CHECK(kept->answer == R"({"v":2})");
}
