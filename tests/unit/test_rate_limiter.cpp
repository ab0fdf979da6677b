// The shared rate limiter and the API's stop signals, without a server and without sleeping.
#include <dibs/http/rate_limiter.hpp>

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

TEST_CASE("rates parse as N/s or N/min", "[rate]") {
  CHECK(parse_rate("10/s") == 10.0);
  CHECK(parse_rate("45/min") == Approx(0.75));
  CHECK(parse_rate("2.5/s") == 2.5);
  CHECK_FALSE(parse_rate("10"));
  CHECK_FALSE(parse_rate("0/s"));
  CHECK_FALSE(parse_rate("-1/s"));
  CHECK_FALSE(parse_rate("10/fortnight"));
  CHECK_FALSE(parse_rate("ten/s"));
}

TEST_CASE("reserved slots are spaced by the rate, with one burst allowed", "[rate]") {
  rate_limiter strict(10, 1);
  const auto t0 = strict.reserve("h");
  for (int i = 1; i <= 5; ++i) CHECK(strict.reserve("h") - t0 >= i * 100ms - 1ms);

  // "At once" is "not later than the moment the call returned", which holds however slowly
  // this machine runs; the waits are lower bounds, which hold too.
  // (Each slot is taken before the clock is read: the operands of <= have no order.)
  rate_limiter bursty(10, 3);
  const auto b0 = bursty.reserve("h");
  const auto b1 = bursty.reserve("h");
  CHECK(b1 <= rate_limiter::clock::now());  // within the burst
  const auto b2 = bursty.reserve("h");
  CHECK(b2 <= rate_limiter::clock::now());
  CHECK(bursty.reserve("h") - b0 >= 99ms);  // the burst is spent: back to the rate

  rate_limiter none;
  none.reserve("h");
  const auto n1 = none.reserve("h");
  CHECK(n1 <= rate_limiter::clock::now());  // no rate of its own
}

TEST_CASE("a paused host gets no slot before the pause ends, and other hosts are not affected", "[rate]") {
  rate_limiter l;
  const auto until = rate_limiter::clock::now() + 2s;
  l.pause("api", until);
  CHECK(l.reserve("api") >= until);
  CHECK(l.reserve("other") < until - 1s);
  l.pause("api", until - 1s);  // an earlier stop never shortens a later one
  CHECK(l.paused_until("api") == until);
}

TEST_CASE("the API's stop signals: ip-api, Retry-After, RateLimit headers", "[rate]") {
  const auto now = std::chrono::system_clock::from_time_t(1'700'000'000);
  using H = std::vector<std::pair<std::string, std::string>>;
  CHECK(stop_until_from_headers(200, H{{"X-Rl", "0"}, {"X-Ttl", "7"}}, now) == now + 7s);
  CHECK_FALSE(stop_until_from_headers(200, H{{"X-Rl", "3"}, {"X-Ttl", "7"}}, now));
  CHECK(stop_until_from_headers(429, H{{"Retry-After", "12"}}, now) == now + 12s);
  CHECK(stop_until_from_headers(503, H{{"retry-after", "3"}}, now) == now + 3s);
  // An HTTP date, read against the server's own Date (a skewed client clock doesn't matter).
  CHECK(stop_until_from_headers(429, H{{"Date", "Tue, 14 Nov 2023 22:13:20 GMT"}, {"Retry-After", "Tue, 14 Nov 2023 22:13:50 GMT"}},
                                now) == now + 30s);
  CHECK(stop_until_from_headers(200, H{{"RateLimit-Remaining", "0"}, {"RateLimit-Reset", "4"}}, now) == now + 4s);
  CHECK(stop_until_from_headers(429, H{}, now) == now + 1s);  // a bare 429 still slows everyone down
  CHECK_FALSE(stop_until_from_headers(500, H{{"Retry-After", "soon"}}, now));
  CHECK_FALSE(stop_until_from_headers(200, H{{"Retry-After", "5"}}, now));  // only meant for 429/503
}

TEST_CASE("a slot dropped unused goes back: the schedule does not run ahead of the calls made", "[rate]") {
  rate_limiter l(1, 1);  // one a second: wide margins on a loaded machine
  std::vector<rate_limiter::slot> held;
  for (int i = 0; i < 5; ++i) held.push_back(l.take("h"));
  const auto t0 = held[0].at();
  held[0].use();
  // The waiters for the slots at +2 s and +4 s (the latest) are cancelled.
  held[2] = rate_limiter::slot{};
  held.pop_back();
  // The next callers get exactly those times back, earliest first, then the schedule goes on
  // where five slots end (+5 s), not where seven taken slots would (+7 s).
  auto a = l.take("h");
  auto b = l.take("h");
  auto c = l.take("h");
  CHECK(a.at() == t0 + 2s);
  CHECK(b.at() == t0 + 4s);
  CHECK(c.at() == t0 + 5s);
}

TEST_CASE("a used slot is never given back, and a slot whose time has come is not handed out again", "[rate]") {
  rate_limiter l(1, 1);
  auto first = l.take("h");
  auto second = l.take("h");
  const auto t0 = first.at();
  second.use();
  { auto dropped = std::move(second); }  // a used slot, moved and destroyed: nothing comes back
  first = rate_limiter::slot{};         // its time (now) has come: the rate was simply not used
  CHECK(l.take("h").at() >= t0 + 2s);
}

TEST_CASE("a slot given back is only handed to a host that may be sent to at its time", "[rate]") {
  rate_limiter l(1, 1);
  auto s0 = l.take("a");
  auto s1 = l.take("a");
  auto s2 = l.take("a");
  const auto t0 = s0.at();
  s1 = rate_limiter::slot{};  // +1 s comes back
  l.pause("b", t0 + 10s);
  CHECK(l.take("b").at() >= t0 + 10s);  // b is paused: the +1 s slot is of no use to it
  CHECK(l.take("a").at() == t0 + 1s);
}

TEST_CASE("an API's quota spreads its host's slots to the window's end, other hosts free, a newer reading withdraws slots",
          "[rate][quota]") {
  rate_limiter l;  // no --rate: only what the API says
  using headers = std::vector<std::pair<std::string, std::string>>;
  const auto sent = rate_limiter::clock::now();
  // 11 of 100 left in a window that ends 10.5 s from now: about 0.95 s apart.
  CHECK_FALSE(l.follow_quota("h", headers{{"RateLimit-Limit", "100"}, {"RateLimit-Remaining", "11"}, {"RateLimit-Reset", "10.5"}},
                             sent, 1h));
  const auto t0 = l.reserve("h");
  auto last = t0;
  for (int i = 1; i <= 4; ++i) {
    const auto t = l.reserve("h");
    CHECK(t - last >= 900ms);
    CHECK(t - last <= 1000ms);
    last = t;
  }
  // Another host is not paced by h's quota.
  const auto before = rate_limiter::clock::now();
  const auto other = l.reserve("other");  // taken before the clock is read: <= has no order of operands
  CHECK(other <= rate_limiter::clock::now());
  CHECK(other >= before);
  // The API says 1 left (another client took the rest): the slots handed out beyond it are
  // withdrawn, and a waiter holding one takes another (wait_for_slot checks quota_epoch()).
  const auto epoch = l.quota_epoch();
  l.follow_quota("h", headers{{"RateLimit-Limit", "100"}, {"RateLimit-Remaining", "1"}, {"RateLimit-Reset", "10.4"}}, sent, 1h);
  CHECK(l.quota_epoch() != epoch);
  // A quota that asks for more than max_wait between requests says so (the caller warns), and
  // its slots are no further apart than that.
  rate_limiter slow;
  CHECK(slow.follow_quota("h", headers{{"X-RateLimit-Remaining", "2"}, {"X-RateLimit-Reset", "86400"}}, sent, 30s));
  const auto s0 = slow.reserve("h");
  CHECK(slow.reserve("h") - s0 <= 30s + 100ms);  // (from the second reserve's own now)
}

TEST_CASE("a quota header with none left stops the host until its reset, in every dialect", "[rate][quota]") {
  const auto now = std::chrono::system_clock::now();
  using headers = std::vector<std::pair<std::string, std::string>>;
  CHECK(stop_until_from_headers(200, headers{{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "7"}}, now) == now + 7s);
  CHECK(stop_until_from_headers(200, headers{{"RateLimit", "\"default\";r=0;t=3"}}, now) == now + 3s);
  CHECK(stop_until_from_headers(200, headers{{"RateLimit-Remaining", "0"}, {"RateLimit-Reset", "2"}}, now) == now + 2s);
  CHECK_FALSE(stop_until_from_headers(200, headers{{"X-RateLimit-Remaining", "5"}, {"X-RateLimit-Reset", "7"}}, now));
}
