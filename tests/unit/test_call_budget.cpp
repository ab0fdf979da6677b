// A budget's book: no item claimed without a call left for it, so the calls never pass what is
// held; and its periods (UTC days and months).
#include "adapters/http/budget/budget_book.hpp"
#include "adapters/http/budget/budget_period.hpp"

#include "engine/src/budget_store.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

TEST_CASE("items are reserved only while calls are left, and an item that ends without a call gives its room back", "[budget]") {
  budget_book b(5);
  CHECK(b.reserve(3) == 3);
  CHECK(b.reserve(3) == 2);  // 5 held
  CHECK(b.reserve(1) == 0);
  b.called();  // one of them calls: it still holds its reservation until it ends
  b.called();
  CHECK(b.reserve(1) == 0);
  b.ended(2);  // the two that called ended
  CHECK(b.reserve(5) == 0);  // 2 spent, 3 reserved: 5
  b.ended(1);  // one ended without a call (a reused answer)
  CHECK(b.reserve(5) == 1);
  CHECK(b.spent() == 2);
  CHECK(b.unspent() == 3);
}

TEST_CASE("the shortfall is what must be taken from the store first", "[budget]") {
  budget_book b;
  CHECK(b.shortfall(10) == 10);
  b.hold(4);
  CHECK(b.reserve(10) == 4);
  CHECK(b.shortfall(1) == 1);
  b.ended(4);
  CHECK(b.shortfall(4) == 0);
}

TEST_CASE("the store's grant never passes the limit", "[budget]") {
  CHECK(dibs::budget_grant(0, 10, 50) == 10);
  CHECK(dibs::budget_grant(45, 10, 50) == 5);
  CHECK(dibs::budget_grant(50, 10, 50) == 0);
  CHECK(dibs::budget_grant(60, 10, 50) == 0);
}

TEST_CASE("the budget's text, periods by UTC calendar and when they renew", "[budget]") {
  CHECK(parse_budget("100000/day")->calls == 100000);
  CHECK(parse_budget("5000/month")->span == budget_span::month);
  CHECK_FALSE(parse_budget("0/day"));
  CHECK_FALSE(parse_budget("10/hour"));
  CHECK_FALSE(parse_budget("-5/day"));
  CHECK_FALSE(parse_budget("day"));
  const auto t = std::chrono::system_clock::from_time_t(1'798'761'599);  // 2026-12-31 23:59:59 UTC
  CHECK(period_name(budget_span::day, t) == "day 2026-12-31");
  CHECK(period_name(budget_span::month, t) == "month 2026-12");
  CHECK(utc_text(renews_at(budget_span::day, t)) == "2027-01-01 00:00 UTC");
  CHECK(utc_text(renews_at(budget_span::month, t)) == "2027-01-01 00:00 UTC");
}
