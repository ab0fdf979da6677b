// This process's side of a rate shared through the store (shared_rate.hpp), on a fake record.
#include "support/stderr_of.hpp"

#include <dibs/http/rate_limiter.hpp>
#include "adapters/http/rate/shared_rate.hpp"

#include "engine/src/rate_bucket.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <stdexcept>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// The record in memory, timed by a clock the test moves: what a store does, minus the store.
struct fake_record : shared_rate_store {
  std::mutex m;
  rate_bucket_state state;
  std::int64_t now_us = 1'000'000;
  int blocks = 0, pauses = 0, asked = 0;
  bool down = false;
  rate_block take_block(const rate_block_request& r) override {
    std::lock_guard lock(m);
    ++asked;
    if (down) throw std::runtime_error("connection refused");
    ++blocks;
    const auto g = grant_block(state, now_us, r.want, r.interval.count());
    state = g.next;
    return g.block;
  }
  void pause(const std::string&, std::chrono::microseconds for_) override {
    std::lock_guard lock(m);
    ++pauses;
    state = pause_bucket(state, now_us, for_.count());
  }
  std::chrono::microseconds paused_for(const std::string&) override {
    std::lock_guard lock(m);
    if (down) throw std::runtime_error("connection refused");
    return std::chrono::microseconds(paused_for_us(state, now_us));
  }
};
}  // namespace

TEST_CASE("slots come from the store a block at a time, one interval apart", "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  http::shared_rate r(record, "http://api:80", 10);  // blocks of 5, 100 ms apart
  REQUIRE(r.block() == 5);
  const auto first = r.next_blocking();
  REQUIRE(first.granted);
  CHECK_FALSE(first.recheck);  // the block starts now
  for (int i = 1; i < 5; ++i) {
    const auto t = r.next_blocking();
    CHECK(t.granted);
    CHECK(t.at - first.at == i * 100ms);
  }
  CHECK(record->blocks == 1);  // one round trip for five requests
  const auto sixth = r.next_blocking();
  CHECK(record->blocks == 2);
  CHECK(sixth.granted);
  CHECK(sixth.recheck);  // the record had the next half second taken already: it waited
  CHECK(sixth.at - first.at >= 450ms);
}

TEST_CASE("a store that can't be reached hands out no slot", "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  record->down = true;
  http::shared_rate r(record, "http://api:80", 10);
  const auto t = r.next_blocking();
  CHECK_FALSE(t.granted);
  CHECK(t.at > http::shared_rate::clock::now() + 500ms);  // ask again later, not at once
  // Every caller waiting meanwhile is told the same, without asking the store in its turn (a
  // store that takes its timeout to fail would hold a shutdown behind every one of them).
  for (int i = 0; i < 10; ++i) CHECK_FALSE(r.next_blocking().granted);
  CHECK(record->asked == 1);
}

TEST_CASE("a store that is back is asked again once the retry time has come", "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  record->down = true;
  http::shared_rate r(record, "http://api:80", 10, 0ms);
  CHECK_FALSE(r.next_blocking().granted);
  record->down = false;
  CHECK(r.next_blocking().granted);
  CHECK(record->asked == 2);
}

TEST_CASE("a stop the API gave this process goes to the record and ends the block", "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  {
    http::rate_limiter limiter;
    limiter.share(std::make_shared<http::shared_rate>(record, "http://api:80", 10));
    REQUIRE(limiter.shared());
    const auto granted_before = limiter.shared()->next_blocking();
    REQUIRE(granted_before.granted);
    limiter.pause("api", http::rate_limiter::clock::now() + 3s);
    CHECK(limiter.paused_until("api") > http::rate_limiter::clock::now() + 2s);
    // The block's four other slots fall inside the pause: the next slot is a new block's, and
    // the record tells it the pause (once the write, on the store's thread, is done).
  }  // the limiter's end joins the store's thread: the write is done
  CHECK(record->pauses == 1);
  CHECK(record->state.paused_until_us >= record->now_us + 2'900'000);

  http::shared_rate other(record, "http://api:80", 10);  // another process
  const auto t = other.next_blocking();
  CHECK(t.granted);
  CHECK(t.paused_until > http::shared_rate::clock::now() + 2s);
  CHECK(t.at > http::shared_rate::clock::now() + 2s);
  CHECK(other.paused_until_blocking() > http::shared_rate::clock::now() + 2s);
}

TEST_CASE("a limiter sharing the store's rate keeps none of its own", "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  http::rate_limiter limiter(1.0, 1);  // 1/s of its own
  limiter.share(std::make_shared<http::shared_rate>(record, "http://api:80", 10));
  CHECK(limiter.per_second() == 10);  // the rate in force, as /status shows it
  const auto now = http::rate_limiter::clock::now();
  // Five requests from one block, 100 ms apart: not 1/s.
  const auto a = limiter.reserve("api");
  const auto b = limiter.reserve("api");
  CHECK(b - a == 100ms);
  CHECK(a < now + 50ms);
}

TEST_CASE("a rate shared through the store can't be changed by one process (POST /rate)", "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  http::rate_limiter limiter(10);
  limiter.share(std::make_shared<http::shared_rate>(record, "http://api:80", 10));
  CHECK_THROWS_AS(limiter.set_per_second(100), std::invalid_argument);
  http::rate_limiter own(10);
  own.set_per_second(100);  // a process's own rate can
  CHECK(own.per_second() == 100);
}

TEST_CASE("a record that says wait for years is cut to the longest wait this process honors, with a warning",
          "[rate][shared-rate]") {
  auto record = std::make_shared<fake_record>();
  // Set by hand, by a clock gone wrong, or by someone hostile: paused and booked 100 years ahead.
  constexpr std::int64_t century_us = 100LL * 365 * 24 * 3600 * 1'000'000;
  record->state.paused_until_us = record->now_us + century_us;
  record->state.tat_us = record->now_us + century_us;
  http::shared_rate r(record, "http://api:80", 10, std::chrono::seconds(1), /*max_wait=*/std::chrono::seconds(2));
  http::shared_rate::turn t;
  http::shared_rate::clock::time_point paused;
  const auto asked = http::shared_rate::clock::now();
  const auto log = test::stderr_of([&] {
    t = r.next_blocking();
    paused = r.paused_until_blocking();
  });
  INFO(log);
  CHECK(t.granted);
  CHECK(t.at <= asked + 3s);  // within max_wait (and a margin), not in 2126
  CHECK(t.paused_until <= asked + 3s);
  CHECK(paused <= http::shared_rate::clock::now() + 3s);
  CHECK(paused > asked);  // still paused, only not for a century
  CHECK_THAT(log, Catch::Contains("shared rate record of http://api:80"));
  CHECK_THAT(log, Catch::Contains("DELETE FROM dibs_rate WHERE origin = 'http://api:80'"));
}
