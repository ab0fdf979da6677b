// What an item's outcome becomes in the store (engine/src/settlement.hpp), without a store.
#include "engine/src/settlement.hpp"

#include "engine/src/reason_text.hpp"

#include <catch2/catch.hpp>

using dibs::outcome;
using dibs::settlement;
using ms = std::chrono::milliseconds;

namespace {
dibs::job item(int attempts) {
  dibs::job j;
  j.id = "42";
  j.by = "w";
  j.token = 9;
  j.attempts = attempts;
  return j;
}
}  // namespace

TEST_CASE("settlement: an answer is written under the item's lease, and no data is said apart", "[settlement]") {
  auto s = settlement_of(item(1), outcome::done("{\"a\":1}"), false, false, 3);
  CHECK(s.k == settlement::kind::complete);
  CHECK_FALSE(s.no_data);
  const auto& c = std::get<dibs::completion>(s.write);
  CHECK(c.ref.id == "42");
  CHECK(c.ref.by == "w");
  CHECK(c.ref.token == 9);
  CHECK(c.result_json == "{\"a\":1}");
  s = settlement_of(item(1), outcome::no_data_answer("{}", "private range"), false, false, 3);
  CHECK(s.k == settlement::kind::complete);
  CHECK(s.no_data);
  CHECK(s.why == "private range");
}

TEST_CASE("settlement: a retry is given back after its delay until the last attempt, then it fails saying so",
          "[settlement]") {
  auto s = settlement_of(item(2), outcome::retry(ms(1500), "HTTP 503", 503), false, false, 3);
  CHECK(s.k == settlement::kind::retry);
  const auto r = std::get<dibs::release_item>(s.write);
  CHECK(r.delay == ms(1500));
  CHECK(r.why == "HTTP 503");
  CHECK(r.http_status == 503);
  CHECK_FALSE(r.unprocessed);  // an attempt spent: not counted as released
  s = settlement_of(item(3), outcome::retry(ms(1500), "HTTP 503", 503), false, false, 3);
  CHECK(s.k == settlement::kind::give_up);
  const auto f = std::get<dibs::failure>(s.write);
  CHECK(f.reason == "gave up after 3 attempts: HTTP 503");
  CHECK(f.http_status == 503);
  CHECK(f.attempts == 3);
}

TEST_CASE("settlement: a cancelled call is given back at once, unprocessed, whatever its outcome", "[settlement]") {
  auto s = settlement_of(item(3), outcome::retry(ms(900), "cancelled mid-call"), true, false, 3);
  CHECK(s.k == settlement::kind::give_back);  // not given up: the call never ended
  auto r = std::get<dibs::release_item>(s.write);
  CHECK(r.delay == ms(0));
  CHECK(r.unprocessed);
  CHECK(r.why == "cancelled mid-call");
  r = std::get<dibs::release_item>(settlement_of(item(1), outcome::done("{}"), true, true, 3).write);
  CHECK(r.why == "shutdown");  // a stopping shard says why it gave the item back
  r = std::get<dibs::release_item>(settlement_of(item(1), outcome::fail(""), true, false, 3).write);
  CHECK(r.why == "shutdown");
}

TEST_CASE("settlement: an item whose call a budget never let go is given back with its attempt, even while stopping",
          "[settlement]") {
  // The budget in money refused it at its turn (the call budgets' gate refuses before the claim):
  // nothing reached the API, so the claim's attempt goes back, or a few budget-cut runs would fail
  // rows never asked.
  for (const bool stopping : {false, true}) {
    const auto s = settlement_of(item(4), outcome::not_sent("not sent: the budget has no room left for it"), true, stopping, 5);
    CHECK(s.k == settlement::kind::give_back);
    const auto r = std::get<dibs::release_item>(s.write);
    CHECK(r.not_attempted);
    CHECK(r.why == "not sent: the budget has no room left for it");
  }
  // A call cancelled in flight may have reached the API: its attempt stands.
  CHECK_FALSE(std::get<dibs::release_item>(settlement_of(item(1), outcome::retry(ms(0), "cut"), true, true, 3).write).not_attempted);
}

TEST_CASE("settlement: a failure keeps the processor's reason, bounded, with its status and attempts", "[settlement]") {
  const std::string long_reason(5000, 'x');
  const auto s = settlement_of(item(2), outcome::fail(long_reason, 404), false, false, 3);
  CHECK(s.k == settlement::kind::fail);
  const auto f = std::get<dibs::failure>(s.write);
  CHECK(f.reason.size() <= dibs::max_reason_bytes);
  CHECK(f.reason == dibs::bounded_reason(long_reason));
  CHECK(f.http_status == 404);
  CHECK(f.attempts == 2);
}

TEST_CASE("settlement: a 429 or 529 goes back to wait with its attempt given back, even at the last attempt",
          "[settlement]") {
  for (const auto& o : {outcome::paced_retry(ms(1000), "HTTP 429 Too Many Requests", 429),
                        [] {
                          auto u = outcome::unavailable(ms(2000), "HTTP 529", 529);
                          u.paced = true;
                          return u;
                        }()}) {
    const auto s = settlement_of(item(3), o, false, false, 3);
    CHECK(s.k == settlement::kind::retry);
    const auto r = std::get<dibs::release_item>(s.write);
    CHECK(r.not_attempted);
    CHECK(r.delay == o.after);
    CHECK(r.http_status == o.http_status);
  }
}
