// The tokens a minute held by every process on one store (shared_tokens.hpp): a schedule of tokens
// in the store's record, taken many slots at once, with what answers did not use kept as credit.
#include "support/run_sync.hpp"

#include "adapters/http/rate/shared_rate.hpp"
#include "adapters/http/rate/shared_tokens.hpp"

#include "engine/src/rate_bucket.hpp"

#include <catch2/catch.hpp>

#include <mutex>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// The record in memory: what a store does with a block, minus the store.
struct token_record : shared_rate_store {
  std::mutex m;
  rate_bucket_state state;
  std::int64_t now_us = 1'000'000;
  int blocks = 0;
  std::uint64_t slots = 0;  // every slot handed out, by every process
  rate_block take_block(const rate_block_request& r) override {
    std::lock_guard lock(m);
    ++blocks;
    const auto g = grant_block(state, now_us, r.want, r.interval.count(), r.saved.count());
    state = g.next;
    slots += g.block.granted;
    return g.block;
  }
  void pause(const std::string&, std::chrono::microseconds) override {}
  std::chrono::microseconds paused_for(const std::string&) override { return {}; }
};

awaitable<int> take(http::shared_tokens& t, std::int64_t n) {
  co_await t.take(n);
  co_return 0;
}
}  // namespace

TEST_CASE("a request of many tokens takes them in one trip to the store, the last one's time its own", "[rate][shared-tokens]") {
  auto record = std::make_shared<token_record>();
  http::shared_rate r(record, "http://llm:80 tokens", 1000);  // a token a millisecond, blocks of 500
  const auto before = http::shared_rate::clock::now();
  const auto t = r.next_blocking(1200);
  CHECK(t.granted);
  CHECK(record->blocks == 1);
  CHECK(record->slots == 1200);
  CHECK(t.at - before >= 1199ms);  // the 1,200th token is due 1.199 s after the first
  // A small one next comes from a block of its own (the one in hand is used up), after them.
  const auto u = r.next_blocking(10);
  CHECK(record->blocks == 2);
  CHECK(u.at > t.at);
}

TEST_CASE("two processes on one record never take more tokens than the rate between them", "[rate][shared-tokens]") {
  auto record = std::make_shared<token_record>();
  http::shared_rate a(record, "http://llm:80 tokens", 1000), b(record, "http://llm:80 tokens", 1000);
  const auto start = http::shared_rate::clock::now();
  http::shared_rate::clock::time_point last{};
  for (int i = 0; i < 20; ++i) {  // 40 requests of 300 tokens: 12,000 tokens at 1,000 a second
    last = std::max({last, a.next_blocking(300).at, b.next_blocking(300).at});
  }
  // Both held to one schedule: the last token is due no sooner than 12,000 tokens' time (less a
  // block each: the slots a process holds in hand).
  CHECK(last - start >= 12s - 1s);
  CHECK(record->slots >= 12'000);
}

TEST_CASE("what an answer did not use is this process's credit, spent before the store, and more used is a debt", "[rate][shared-tokens]") {
  auto record = std::make_shared<token_record>();
  auto schedule = std::make_shared<http::shared_rate>(record, "http://llm:80 tokens", 100'000);
  http::shared_tokens tokens(schedule);
  test::run_sync(take(tokens, 300));
  const auto taken = record->slots;
  CHECK(taken >= 300);
  tokens.settle(300, 100);  // reserved 300, used 100: 200 never charged
  CHECK(tokens.credit() == 200);
  const auto blocks = record->blocks;
  test::run_sync(take(tokens, 150));
  CHECK(record->blocks == blocks);  // from the credit alone
  CHECK(tokens.credit() == 50);
  tokens.settle(100, 400);  // 300 more than reserved: owed
  CHECK(tokens.credit() == -250);
  tokens.settle(100, -1);  // usage unknown: the reservation stands, nothing changes
  CHECK(tokens.credit() == -250);
  tokens.settle(500, 0);  // a 429: nothing charged, all of it back
  CHECK(tokens.credit() == 250);
}

TEST_CASE("the credit is kept to a minute of the rate: tokens never charged are not saved up past the refill", "[rate][shared-tokens]") {
  auto record = std::make_shared<token_record>();
  http::shared_tokens tokens(std::make_shared<http::shared_rate>(record, "http://llm:80 tokens", 100));  // 6,000 a minute
  for (int i = 0; i < 100; ++i) tokens.settle(1000, 0);
  CHECK(tokens.credit() == 6000);
}

TEST_CASE("a schedule of tokens saves up a minute of them, as the API's bucket does: due at once, never dropped", "[rate][shared-tokens]") {
  auto record = std::make_shared<token_record>();
  record->now_us = 1'800'000'000'000'000;  // the store's clock in 2027
  http::shared_rate r(record, "http://llm:80 tokens", 100, 1s, 1h, 60s);  // 6,000 a minute, blocks of 50
  const auto now = http::shared_rate::clock::now();
  // A fresh record: a whole minute's tokens (6,000) are due now, in one take or in many.
  CHECK(r.next_blocking(4000).at <= now + 100ms);
  for (int i = 0; i < 40; ++i) CHECK(r.next_blocking(50).at <= now + 100ms);
  // The minute is spent: the next tokens come at the rate (100 a second).
  CHECK(r.next_blocking(100).at >= now + 900ms);
}

TEST_CASE("a high token rate is scheduled in slots of many tokens, so the record's whole microseconds keep it exact", "[rate][shared-tokens]") {
  CHECK(http::shared_tokens::tokens_per_slot(150'000) == 1);      // 2,500 a second: 400 us a token
  CHECK(http::shared_tokens::tokens_per_slot(40'000'000) == 67);  // 666,667 a second: 100.5 us a slot of 67
  auto record = std::make_shared<token_record>();
  const double per_minute = 40'000'000;
  const auto per_slot = http::shared_tokens::tokens_per_slot(per_minute);
  auto schedule = std::make_shared<http::shared_rate>(record, "http://llm:80 tokens", per_minute / 60 / per_slot);
  http::shared_tokens tokens(schedule, per_slot);
  CHECK(tokens.per_minute() == Approx(per_minute).epsilon(0.01));
  test::run_sync(take(tokens, 100));  // two slots of 67: 34 over, this process's credit
  CHECK(record->blocks == 1);
  CHECK(tokens.credit() == 34);
}
