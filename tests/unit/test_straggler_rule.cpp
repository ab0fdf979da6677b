// When a request stops counting against its origin's adaptive limit
// (adapters/http/client/straggler_watch.hpp), and what the limit calls the origin's usual answer.
#include "adapters/http/client/straggler_watch.hpp"

#include <dibs/http/adaptive_limit.hpp>

#include <catch2/catch.hpp>

using namespace dibs::http;
using namespace std::chrono_literals;

TEST_CASE("a request is a straggler at eight times the origin's usual answer, never under 50 ms", "[straggler]") {
  CHECK(straggler_after(0us) == 0ms);  // nothing known of the origin yet: no request is late
  CHECK(straggler_after(300us) == 50ms);
  CHECK(straggler_after(6'250us) == 50ms);
  CHECK(straggler_after(10ms) == 80ms);
  CHECK(straggler_after(250ms) == 2'000ms);
}

TEST_CASE("stragglers: under the ceiling (--concurrency) with the limit, and four per permit", "[straggler]") {
  CHECK(may_release(0, 1, 1000));
  CHECK(may_release(3, 1, 1000));
  CHECK_FALSE(may_release(4, 1, 1000));
  CHECK(may_release(31, 8, 1000));  // a slow tail: many more stragglers than the limit
  CHECK_FALSE(may_release(32, 8, 1000));
  CHECK(may_release(699, 300, 1000));
  CHECK_FALSE(may_release(700, 300, 1000));  // the ceiling first
  CHECK_FALSE(may_release(0, 4, 4));  // the limit at its ceiling: no room beside it
}

TEST_CASE("past four per permit, stragglers run beside the limit while few of the requests turn straggler", "[straggler]") {
  // A slow tail: 2% of the items take seconds; 160 of them at once beside a limit of 35.
  CHECK(may_release(160, 35, 1000, 0.02));
  // A stall: every request turns straggler; five times the limit is the most it gets.
  CHECK_FALSE(may_release(140, 35, 1000, 0.9));
  CHECK(may_release(139, 35, 1000, 0.9));
  CHECK_FALSE(may_release(965, 35, 1000, 0.02));  // the ceiling first, whatever the share
  straggler_share share;
  CHECK(share.share() == 1);  // nothing sent yet: as a stall, until the requests tell otherwise
  for (int i = 0; i < 1000; ++i) {
    share.sent();
    if (i % 50 == 0) share.turned();
  }
  CHECK(share.share() == Approx(0.02));
  // The older half is forgotten past 2,048 sent: a tail that became a stall shows within a few
  // thousand requests.
  for (int i = 0; i < 3000; ++i) {
    share.sent();
    share.turned();
  }
  CHECK(share.share() > tail_share);
}

TEST_CASE("a new connection's late first request is one the server has not taken when many are late", "[straggler]") {
  // Apache's prefork behind 8 workers, slow start at 16: of 14 new connections, 6 answered and
  // 8 were late; of 800 answers, 8 closed their connection (MaxKeepAliveRequests).
  CHECK(unserved_connection(800, 792, 8, 6));
  CHECK(unserved_connection(800, 792, 3, 6));
  CHECK_FALSE(unserved_connection(800, 792, 2, 0));    // one or two: maybe slow items
  CHECK_FALSE(unserved_connection(800, 792, 3, 7));
  CHECK_FALSE(unserved_connection(800, 792, 5, 245));  // a slow tail of 2% of the items
  // HTTP/1.0 or `Connection: close`: every request is the first on its connection, and a slow
  // tail's requests turn straggler as anywhere.
  CHECK_FALSE(unserved_connection(800, 0, 8, 6));
  CHECK_FALSE(unserved_connection(800, 399, 8, 6));
  CHECK(unserved_connection(800, 400, 8, 6));
  CHECK_FALSE(unserved_connection(0, 0, 8, 6));  // nothing known of the origin yet
}

TEST_CASE("where the server takes no more connections, the pool keeps only those it served, and the bound only rises",
          "[straggler]") {
  // Nothing unserved: no bound (0), and a bound in place goes.
  CHECK(connections_to_keep(false, 0, 8) == 0);
  CHECK(connections_to_keep(false, 8, 8) == 0);
  // Prefork's 8 workers behind 16 connections: the 8 served ones, at least 1.
  CHECK(connections_to_keep(true, 0, 8) == 8);
  CHECK(connections_to_keep(true, 0, 0) == 1);
  // A served connection the server closed after its last request is replaced, not given up: the
  // bound holds at 8 while 7 are open; it rises when more are served.
  CHECK(connections_to_keep(true, 8, 7) == 8);
  CHECK(connections_to_keep(true, 8, 10) == 10);
}

TEST_CASE("new connections' first requests are counted lately: the older half is forgotten past 512", "[straggler]") {
  // A cold start: 4 of the first 6 late, then every new connection answered in time.
  std::uint64_t served = 2, late = 4;
  CHECK(unserved_connection(100, 100, late, served));
  for (int i = 0; i < 1500; ++i) {
    ++served;
    age_first_requests(served, late);
  }
  CHECK(late == 0);  // faded: halved three times (4 -> 2 -> 1 -> 0)
  CHECK(served < 512);
  // Then the server stops taking connections: within a few hundred new ones, the rule holds.
  int n = 0;
  while (!unserved_connection(100, 100, late, served)) {
    ++late;
    age_first_requests(served, late);
    ++n;
  }
  CHECK(n < 300);
}

TEST_CASE("the origin's usual answer: the fastest yet, then the round trips' moving average", "[straggler]") {
  const auto t0 = adaptive_limit::clock::time_point{} + 1h;
  adaptive_limit l(adaptive_settings{}, t0);
  CHECK(l.typical_latency() == 0us);
  l.answered(4ms, t0 + 1ms);
  CHECK(l.typical_latency() == 4ms);  // one answer, no round trip ended: the fastest yet
  l.answered(2ms, t0 + 2ms);
  CHECK(l.typical_latency() == 2ms);
  // A round trip ends (5 ms, and eight answers): its lower quartile, not the slow items' 3 s, is
  // the moving average's first value.
  for (int i = 0; i < 5; ++i) l.answered(2ms, t0 + 3ms);
  l.answered(3s, t0 + 6ms);
  CHECK(l.typical_latency() == 2ms);
  // The next round trip's (6 ms) moves the average by its weight (0.4): 2 + 0.4 x 4 = 3.6 ms.
  for (int i = 0; i < 8; ++i) l.answered(6ms, t0 + 20ms);
  CHECK(l.typical_latency() == 3600us);
}

TEST_CASE("the requests holding permits queue oldest first, and leave from anywhere", "[straggler]") {
  straggler_queue q;
  straggler_entry a, b, c;
  CHECK(q.empty());
  q.push(a);
  q.push(b);
  q.push(c);
  CHECK(q.oldest() == &a);
  q.remove(b);  // a request in the middle ended
  CHECK_FALSE(b.queued);
  CHECK(a.next == &c);
  CHECK(c.prev == &a);
  q.remove(a);  // the oldest turned straggler
  CHECK(q.oldest() == &c);
  q.remove(a);  // not queued: nothing
  CHECK(q.oldest() == &c);
  q.remove(c);
  CHECK(q.empty());
  q.push(b);  // and back again
  CHECK(q.oldest() == &b);
  CHECK(b.prev == nullptr);
  CHECK(b.next == nullptr);
}

TEST_CASE("round trips of nothing but stragglers' answers lower no limit, where the same latencies from requests under it do",
          "[straggler]") {
  const auto run = [](bool stragglers) {
    const auto t0 = adaptive_limit::clock::time_point{} + 1h;
    adaptive_settings st;
    st.max = 2;  // slow start ends at its first round trip (at the ceiling): the spike rule applies
    adaptive_limit l(st, t0);
    auto now = t0;
    // Round trips of fast answers (1 ms) set the moving average.
    for (int rt = 0; rt < 10; ++rt) {
      now += 6ms;
      for (int i = 0; i < 8; ++i) l.answered(1ms, now);
    }
    const auto before = l.limit();
    // Then two round trips in a row whose answers all took 2 s (the fast items were waiting).
    for (int rt = 0; rt < 2; ++rt) {
      now += 6ms;
      for (int i = 0; i < 8; ++i) l.answered(2s, now, stragglers);
    }
    // ... and fast answers again.
    now += 6ms;
    for (int i = 0; i < 8; ++i) l.answered(1ms, now);
    return std::make_pair(before, l.limit());
  };
  const auto [before, after] = run(true);
  CHECK(after >= before);
  const auto [before_under, after_under] = run(false);
  CHECK(after_under < before_under);  // the contrast: a spike from requests under the limit is queueing
}
