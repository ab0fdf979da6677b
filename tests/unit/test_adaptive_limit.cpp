// The adaptive limit on one API's requests in flight (include/dibs/http/adaptive_limit.hpp), driven by
// a simulated server and a clock the test moves: slow start, growth only with demand, one
// decrease per round trip, a slow tail that is not mistaken for load, and a server whose latency
// doubles and comes back.
#include <dibs/http/adaptive_limit.hpp>
#include <dibs/http/origin_limits.hpp>

#include "adapters/http/client/limit_signals.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <cmath>

using namespace dibs::http;
using namespace std::chrono_literals;
using clock_type = adaptive_limit::clock;

namespace {

// A server with `workers` that each take `service` per request: past `workers` requests at once,
// answers queue (latency grows in proportion), as a thread pool or an event loop at full load.
struct simulated_server {
  std::chrono::microseconds service{10'000};
  double workers = 20;
  std::chrono::microseconds latency(std::size_t in_flight) const {
    const double load = std::max(1.0, static_cast<double>(in_flight) / workers);
    return std::chrono::microseconds(static_cast<std::int64_t>(static_cast<double>(service.count()) * load));
  }
};

// Runs `rounds` round trips of a client that always has work: each round trip sends `limit`
// requests (all of them reach the limit) and gets their answers one latency later.
void run(adaptive_limit& l, const simulated_server& s, clock_type::time_point& now, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 0);
    const auto lat = s.latency(n);
    now += lat;
    for (std::size_t i = 0; i < n; ++i) l.answered(lat, now);
  }
}

adaptive_settings settings() {
  adaptive_settings s;
  s.initial = 2;
  s.max = 1000;
  return s;
}

// A limit whose slow start ended at `initial` (as a backlog's dropped connects or a stall end it
// early), at `now`; and a server of 1,000 workers x 20 ms (one that scales) for it to climb before.
adaptive_limit ended_slow_start_at(double initial, clock_type::time_point now) {
  auto st = settings();
  st.initial = initial;
  adaptive_limit l(st, now);
  l.connections_unserved(now);
  return l;
}
simulated_server scaling_20ms() {
  simulated_server s;
  s.service = std::chrono::microseconds(20'000);
  s.workers = 1000;
  return s;
}

// A limit that starts at `initial` before a server of 1,000 workers (one that scales), at `now`.
struct before_a_scaling_server {
  explicit before_a_scaling_server(double initial) : l(starting_at(initial), now) { s.workers = 1000; }
  static adaptive_settings starting_at(double initial) {
    auto st = settings();
    st.initial = initial;
    return st;
  }
  clock_type::time_point now = clock_type::time_point{} + 100s;
  adaptive_limit l;
  simulated_server s;
};

// `rounds` round trips of `latency`, each with every permit taken and a hundred requests
// waiting; fewer when `until` says stop first.
void full_round_trips(origin_limit& o, clock_type::time_point& now, int rounds,
                      std::chrono::milliseconds latency = std::chrono::milliseconds(10),
                      const std::function<bool()>& until = [] { return false; }) {
  for (int r = 0; r < rounds && !until(); ++r) {
    const auto n = o.limit();
    for (std::size_t i = 0; i < n; ++i) o.started(100);
    now += latency;
    for (std::size_t i = 0; i < n; ++i) {
      o.answered(latency, 200, false, now);
      o.ended();
    }
  }
}

}  // namespace

TEST_CASE("slow start multiplies the limit by eight a round trip while the latency holds, up to the ceiling", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  simulated_server s;
  s.workers = 1000;  // never loaded in this test: twice the requests, twice the answers
  CHECK(l.limit() == 2);
  run(l, s, now, 1);  // one round trip: its two answers
  CHECK(l.limit() == 16);
  run(l, s, now, 1);
  CHECK(l.limit() == 128);
  run(l, s, now, 1);
  CHECK(l.limit() == 1000);  // the ceiling, in three round trips (it took nine periods of two or more)
  CHECK(l.slow_start());     // ... still to be judged there
  run(l, s, now, 1);
  CHECK_FALSE(l.slow_start());  // no slower at the ceiling: nothing more to find
  CHECK(l.limit() == 1000);
  CHECK(l.decreases() == 0);
}

TEST_CASE("requests on new connections left unanswered end slow start where it stands, and later nothing", "[adaptive]") {
  // Apache's prefork behind 8 workers: at 16, the 8 connections it took answer as fast as ever,
  // the 8 in its listen queue not at all. The round trips judge the answers that came. (Against
  // the real server the step to 128 often comes before those calls are late: only its end here.)
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  simulated_server s;
  s.workers = 1000;
  run(l, s, now, 1);
  REQUIRE(l.limit() == 16);
  CHECK(l.connections_unserved(now));  // the client's straggler watch found them
  CHECK_FALSE(l.slow_start());
  CHECK(l.limit() == 16);  // not cut: the calls it holds keep the served connections busy
  CHECK(l.decreases() == 0);
  run(l, s, now, 2);
  CHECK(l.limit() == 16);  // no step of x8 from here (128 and 1,000 were next)
  CHECK_FALSE(l.connections_unserved(now));  // past slow start, probes are judged by their answers
}

namespace {

// One round trip at `limit` 16 after slow start's step to it: the 2 connections kept from before
// and `new_answered` of the 14 new ones answer (10 ms), the other new ones not (a prefork
// server's listen queue). The new connections' first requests are told sent in the first round
// trip only.
void round_at_16(adaptive_limit& l, clock_type::time_point& now, clock_type::time_point opened, int new_answered,
                 bool first, std::chrono::microseconds latency = 10ms) {
  for (std::size_t i = 0; i < 16; ++i) l.started(i + 1, 0);
  if (first)
    for (int i = 0; i < 14; ++i) l.new_connection_sent(opened);
  now += latency;
  for (int i = 0; i < 2 + new_answered; ++i) {
    if (first && i >= 2) l.new_connection_answered(opened);
    l.answered(latency, now);
  }
}

}  // namespace

TEST_CASE("slow start's step waits for three quarters of the last step's new connections to answer", "[adaptive]") {
  // Apache's prefork behind 8 workers: at 16, the 2 kept connections and 6 of the 14 new ones
  // are served, and their answers hold the latency; the other 8 sit in the listen queue. The
  // step to 128 waited for none of them, and opened 112 more connections into that queue.
  before_a_scaling_server f(2);
  auto& [now, l, s] = f;
  run(l, s, now, 1);
  REQUIRE(l.limit() == 16);
  const auto opened = now + 1us;
  round_at_16(l, now, opened, 6, true);
  CHECK(l.limit() == 16);  // 6 of 14: the step waits
  CHECK(l.slow_start());

  SECTION("the queued connections answer: the step is taken with the answer that brings them to three quarters") {
    now += 1ms;
    for (int i = 0; i < 4; ++i) {
      l.new_connection_answered(opened);
      l.answered(11ms, now);
    }
    CHECK(l.limit() == 16);  // 10 of 14
    l.new_connection_answered(opened);
    CHECK(l.answered(11ms, now));  // 11 of 14
    CHECK(l.limit() == 128);
    CHECK(l.decreases() == 0);
  }
  SECTION("they never answer: slow start ends where it stands, a straggler's lateness later") {
    for (int r = 0; r < 7; ++r) round_at_16(l, now, opened, 6, false);  // 80 ms since the step waited
    CHECK(l.slow_start());
    CHECK(l.limit() == 16);
    round_at_16(l, now, opened, 6, false);
    CHECK_FALSE(l.slow_start());
    CHECK(l.limit() == 16);  // not cut: the queued calls hold their permits, the served ones run
    CHECK(l.decreases() == 0);
  }
  SECTION("a slow round trip between the waiting ones does not put the end off") {
    round_at_16(l, now, opened, 6, false, 30ms);  // slow (one alone is a clump of slow items)
    for (int r = 0; r < 4; ++r) round_at_16(l, now, opened, 6, false);  // 70 ms since the step waited
    CHECK(l.slow_start());
    round_at_16(l, now, opened, 6, false);
    CHECK_FALSE(l.slow_start());
    CHECK(l.limit() == 16);
  }
  SECTION("a slow start entered again (a ceiling lowered, then raised) does not wait for the last one's connections") {
    for (int r = 0; r < 8; ++r) round_at_16(l, now, opened, 6, false);
    REQUIRE_FALSE(l.slow_start());
    l.set_max(8);
    l.set_max(1000);  // held at the old ceiling: slow start again, from 8
    REQUIRE(l.slow_start());
    run(l, s, now, 1);
    CHECK(l.limit() == 64);
  }
  SECTION("where the API closes every connection, each call opens one, and the step waits for none") {
    adaptive_limit c(settings(), now);
    run(c, s, now, 1);
    REQUIRE(c.limit() == 16);
    c.connections_closed(8);  // every answer so far closed its connection
    round_at_16(c, now, now + 1us, 6, true);
    CHECK(c.limit() == 128);
  }
}

TEST_CASE("slow start ends when two round trips in a row are slower than usual, down by the ratio", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  simulated_server s;
  s.workers = 100;  // past 100 in flight, answers queue
  run(l, s, now, 3);   // 2 -> 16 -> 128 -> 1000: the round trip at 128 is already slower (12.8 ms)
  CHECK(l.slow_start());
  run(l, s, now, 2);   // at 1000: 100 ms, ten times the usual 10 ms, twice in a row
  CHECK_FALSE(l.slow_start());
  CHECK(l.limit() >= 100);  // down by at most the last round trip's growth ...
  CHECK(l.limit() <= 160);  // ... and near the capacity: 1000 x 10/100 (or x 10/12.8 from 128)
  CHECK(l.last_decrease() == limit_signal::latency);
}

TEST_CASE("a round trip of a few answers that strays never ends slow start", "[adaptive]") {
  // An API whose latency spreads (10-90 ms): the lower quartile of two answers strays by half.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  // Two answers at 10 ms, then two at 80 ms (a round trip of two is judged on too few answers).
  l.started(1, 0);
  l.started(2, 0);
  now += 10ms;
  l.answered(10ms, now);
  l.answered(10ms, now);
  REQUIRE(l.limit() == 16);
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 7; ++k) l.started(k + 1, 0);
    now += 80ms;
    for (int k = 0; k < 7; ++k) l.answered(80ms, now);  // seven answers: fewer than a round trip is judged on
  }
  CHECK(l.slow_start());
  CHECK(l.limit() == 16);  // held (not grown past a slow round trip), not cut
}

TEST_CASE("the limit does not grow without demand that reaches it", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  for (int r = 0; r < 50; ++r) {
    l.started(1, 0);  // one request at a time: a limit of 2 is never reached
    now += 10ms;
    l.answered(10ms, now);
  }
  CHECK(l.limit() == 2);
}

TEST_CASE("requests waiting for a connection are not in flight for the limit's demand", "[adaptive]") {
  // Every permit taken, a hundred requests waiting for one: demand, and the limit grows. The same
  // while one request holding a permit waits for a connection (the connections' cap, the pace of
  // new ones): the connections hold the calls back, and the limit stays (an API that closes
  // every connection had it run to the ceiling).
  for (const bool one_waits_for_a_connection : {false, true}) {
    INFO(one_waits_for_a_connection);
    auto now = clock_type::time_point{} + 100s;
    origin_limit o("http://api:80", settings(), now);
    if (one_waits_for_a_connection) o.connection_waiting(+1);
    full_round_trips(o, now, 20);
    if (one_waits_for_a_connection)
      CHECK(o.limit() == 2);
    else
      CHECK(o.limit() > 100);
  }
}

TEST_CASE("a wait for a connection that ends (a new connection's handshake) does not keep the limit from growing",
          "[adaptive]") {
  // Each round trip's first requests wait for new connections, then get them: the requests that
  // start after that meet the limit, and it grows as it would.
  auto now = clock_type::time_point{} + 100s;
  origin_limit o("http://api:80", settings(), now);
  for (int r = 0; r < 20; ++r) {
    const auto n = o.limit();
    o.connection_waiting(+1);
    o.started(100);
    o.connection_waiting(-1);
    for (std::size_t i = 1; i < n; ++i) o.started(100);
    now += 10ms;
    for (std::size_t i = 0; i < n; ++i) {
      o.answered(10ms, 200, false, now);
      o.ended();
    }
  }
  CHECK(o.limit() > 100);
}

TEST_CASE("slow start ends where the answers per second stop rising, and the limit settles near the server's capacity", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  simulated_server s;  // 20 workers: past 20 in flight, more only wait
  run(l, s, now, 600);
  CHECK_FALSE(l.slow_start());
  CHECK(l.limit() >= 15);  // near 20: at least most workers busy ...
  CHECK(l.limit() <= 40);  // ... and at most as much again waiting
  CHECK(l.lowest() == 2);
  CHECK(l.highest() >= l.limit());
  CHECK(l.answers_per_second() > 1500);  // 20 workers at 10 ms: 2,000 a second at best
}

TEST_CASE("slow start ends where more requests at the server bring no more answers, though the latency holds", "[adaptive]") {
  // Four answers a millisecond whatever is in flight, each 2 ms after its request, while the
  // requests at the server grow by one every 2 ms (new connections coming up, each a handshake's
  // CPU): a TLS API whose latency held as the limit went 16 -> 128. Without the answers a second
  // weighed against them, slow start ran on to the ceiling.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  double running = 2, due = 0;
  for (int ms = 0; ms < 2000 && l.slow_start(); ++ms) {
    running = std::min<double>(static_cast<double>(l.limit()), running + 0.5);
    due += std::min(running / 2, 4.0);  // Little's law up to 8 at the server, flat past it
    const int answers = static_cast<int>(due);
    due -= answers;
    for (int i = 0; i < answers; ++i) l.started(static_cast<std::size_t>(running), 0);
    now += 1ms;
    for (int i = 0; i < answers; ++i) l.answered(2ms, now);
  }
  CHECK_FALSE(l.slow_start());
  CHECK(l.highest() >= 16);  // it did grow while the answers grew ...
  CHECK(l.limit() >= 8);     // ... and settled where they were most, not at the ceiling
  CHECK(l.limit() <= 48);
}

TEST_CASE("where a new connection costs more than a round trip, slow start doubles once the answers show the last step paid",
          "[adaptive]") {
  // A TLS API whose handshake takes 50 ms, answering in 2 ms, 16 answers a millisecond at most (32
  // at the server: flat past it). Each step's connections open for 25 round trips while those
  // already open answer: judged by them, slow start went 16 -> 128 -> 1,000 in 80 ms, a thousand
  // handshakes for a server that answers as much at 32.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  std::deque<clock_type::time_point> opening;  // connects under way, each open 50 ms after it began
  std::size_t open = 0;
  double due = 0;
  for (int ms = 0; ms < 5000 && l.slow_start(); ++ms) {
    for (; !opening.empty() && opening.front() <= now; opening.pop_front()) {
      ++open;
      l.connection_opened(50ms);
    }
    while (open + opening.size() < l.limit()) opening.push_back(now + 50ms);
    const auto at_server = std::min<std::size_t>(open, l.limit());
    due += static_cast<double>(std::min<std::size_t>(at_server, 32)) / 2;  // Little's law at 2 ms, up to 32
    const int answers = static_cast<int>(due);
    due -= answers;
    for (int i = 0; i < answers; ++i) l.started(l.limit(), 100, l.limit() - at_server);
    now += 1ms;
    for (int i = 0; i < answers; ++i) l.answered(2ms, now);
  }
  CHECK_FALSE(l.slow_start());
  CHECK(l.highest() <= 64);  // a step past where more stopped paying, no more
  CHECK(l.limit() >= 32);
  CHECK(open + opening.size() <= 64);
}

TEST_CASE("where a step's connections never bring three quarters of the limit to the server, slow start still ends", "[adaptive]") {
  // Kept-alive TLS connections that take 50 ms to open, answers in 2 ms, but the server closes
  // one connection in ten (its error answers): two fifths of the permits are always opening a
  // new one, so no sample has three quarters of the limit at the server. Slow start must not
  // wait for one for ever (the hill climbing would never start).
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  double due = 0;
  std::uint64_t answered = 0;
  int ms = 0;
  for (; ms < 10'000 && l.slow_start(); ++ms) {
    const auto limit = l.limit();
    const auto at_server = std::max<std::size_t>(1, limit * 3 / 5);
    due += static_cast<double>(at_server) / 2;  // Little's law at 2 ms: the server scales
    const int answers = static_cast<int>(due);
    due -= answers;
    for (int i = 0; i < answers; ++i) l.started(limit, 100, limit - at_server);
    now += 1ms;
    for (int i = 0; i < answers; ++i) {
      if (++answered % 10 == 0) l.connection_opened(50ms);
      l.connections_closed(answered / 10);
      l.answered(2ms, now);
    }
  }
  CHECK_FALSE(l.slow_start());
  INFO("ended after " << ms << " ms at " << l.limit());
  CHECK(ms < 2'000);
}

TEST_CASE("where every call opens a connection whose handshake is slow, slow start still climbs with the answers", "[adaptive]") {
  // HTTPS with Connection: close before an API that scales: each call spends 50 ms in its
  // handshake and 2 ms at the server, so at any time nearly every permit is opening a
  // connection. Steps judged by the requests at the server (a share of the limit whatever it is),
  // or demand counted only while nothing opens, froze the limit at its start.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  std::deque<clock_type::time_point> calls;  // each call's answer: 52 ms after it started
  std::uint64_t closed = 0;                   // answers so far, each closing its connection
  for (int ms = 0; ms < 5000 && l.slow_start(); ++ms) {
    std::size_t answers = 0;
    for (; !calls.empty() && calls.front() <= now; calls.pop_front()) ++answers;
    for (std::size_t i = 0; i < answers; ++i) l.connection_opened(50ms);
    now += 1ms;
    for (std::size_t i = 0; i < answers; ++i) {
      l.connections_closed(++closed);
      l.answered(2ms, now);
    }
    while (calls.size() < l.limit()) {
      const auto at_server = static_cast<std::size_t>(std::count_if(calls.begin(), calls.end(), [&](auto t) { return t - now <= 2ms; }));
      l.started(calls.size() + 1, 100, calls.size() + 1 - at_server);
      calls.push_back(now + 52ms);
    }
  }
  CHECK(l.highest() >= 256);  // it climbed while the answers grew (by 5 s: 1,000 at once bring 19,000 a second)
}

TEST_CASE("a server that answers more the more it is sent keeps the limit climbing (a fast API)", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  simulated_server s;
  s.workers = 300;
  run(l, s, now, 1000);
  // Held near 300, with probes a quarter above and below it now and then: most of the time at
  // 240 or more.
  int high = 0;
  for (int r = 0; r < 500; ++r) {
    run(l, s, now, 1);
    if (l.limit() >= 240) ++high;
    CHECK(l.limit() <= 600);
  }
  CHECK(high >= 400);
}

TEST_CASE("climbing by probes against an API that scales, each probe kept makes the next one larger", "[adaptive]") {
  // Slow start ended early (a backlog of 5 dropped a burst's connects, or a stall cut it) at 4,
  // before a server of 1,000 workers x 20 ms. Seen against Python's http.server whose pool stalled
  // for 0.35 s: probes a quarter up, each three periods, took 4 -> 88 in 7.5 s (4, 5, 6, 7, 8,
  // 10, 12, 15, 18, 22, 27, 33, 41, 51, ...), a run of 10,000 items at 1,153 docs/s against 1,812
  // without the stall. Each probe kept with the answers up as much as the calls (the latency
  // flat) doubles the next one's step, up to twice the limit: 4, 5, 7, 10, 20, 40, 80.
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(4, now);
  REQUIRE_FALSE(l.slow_start());
  auto s = scaling_20ms();
  const auto start = now;
  auto reached = clock_type::time_point{};
  while (now < start + 10s && reached == clock_type::time_point{}) {
    run(l, s, now, 1);
    if (l.limit() >= 80) reached = now;
  }
  REQUIRE(reached != clock_type::time_point{});
  INFO("80 reached after " << std::chrono::duration_cast<std::chrono::milliseconds>(reached - start).count() << " ms");
  CHECK(reached - start <= 2500ms);
}

TEST_CASE("after a 429, no climb: a later latency decrease (a stall) does not bring it back", "[adaptive]") {
  // The API said its cap once: probes go a quarter at a time for the rest of the run, or each
  // climbing probe past the cap (twice the limit) would have half its calls refused, and every
  // call paused for it. A stall's latency decrease later said nothing of the cap.
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(8, now);
  auto s = scaling_20ms();
  run(l, s, now, 10);
  l.refused(limit_signal::throttled, now);  // one 429
  run(l, s, now, 10);
  const auto start = now;
  std::size_t most_step_over_quarter = 0;
  while (now < start + 10s) {
    // A stall from 1 s to 1.5 s: every answer three times slower (the limit comes down for latency).
    s.service = now >= start + 1s && now < start + 1500ms ? std::chrono::microseconds(60'000) : std::chrono::microseconds(20'000);
    const auto n = l.limit();
    run(l, s, now, 1);
    const auto quarter = std::max<std::size_t>(n + 1, static_cast<std::size_t>(std::floor(static_cast<double>(n) * 1.25)));
    if (l.limit() > quarter) most_step_over_quarter = std::max(most_step_over_quarter, l.limit() - quarter);
  }
  CHECK(l.decreases() >= 2);  // the 429's, and the stall's
  CHECK(most_step_over_quarter == 0);
}

TEST_CASE("a loss during a long probe up comes back no higher than where the probe started", "[adaptive]") {
  // A climbing probe went twice the limit; a gateway's 504s or timeouts past the old limit: x0.7
  // of the probe's limit is 1.4 times where it started, still past what the server took.
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(4, now);
  const auto s = scaling_20ms();
  std::size_t base = 0, probe = 0;
  while (probe == 0 && now < clock_type::time_point{} + 120s) {  // until a probe at least 1.5 times the limit
    const auto n = l.limit();
    run(l, s, now, 1);
    if (static_cast<double>(l.limit()) >= 1.5 * static_cast<double>(n)) {
      base = n;
      probe = l.limit();
    }
  }
  REQUIRE(probe > 0);
  now += 25ms;  // a round trip on: a loss is acted on once a round trip
  REQUIRE(l.overloaded(limit_signal::timeout, now));
  INFO("probe " << base << " -> " << probe << ", after the loss " << l.limit());
  CHECK(l.limit() <= base);
}

TEST_CASE("a limit within a quarter of its ceiling still probes up, to the ceiling", "[adaptive]") {
  // A probe a quarter up from 850 is 1,062, past the default ceiling of 1,000: it was never tried,
  // and a limit a decrease left anywhere from 801 to 999 stayed there before an API that scales.
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(850, now);
  auto s = scaling_20ms();
  s.workers = 5000;
  run(l, s, now, 300);  // 6 s
  CHECK(l.limit() == 1000);
}

TEST_CASE("a burst of overload signals in one round trip costs one decrease", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.initial = 100;
  adaptive_limit l(st, now);
  simulated_server s;
  s.workers = 1000;
  run(l, s, now, 2);  // the average latency is known: 10 ms round trips
  const auto before = l.limit();
  now += 10ms;
  bool changed = false;
  for (int i = 0; i < 50; ++i) changed = l.overloaded(limit_signal::throttled, now + std::chrono::microseconds(i)) || changed;
  CHECK(changed);
  CHECK(l.limit() == static_cast<std::size_t>(std::floor(before * 0.7)));
  CHECK(l.decreases() == 1);
  CHECK(l.last_decrease() == limit_signal::throttled);
  CHECK_FALSE(l.slow_start());
  // The next round trip hears of requests sent before the decrease: they judged the old limit.
  now += 10ms;
  l.overloaded(limit_signal::throttled, now);
  CHECK(l.decreases() == 1);
  // The one after may decrease again.
  now += 10ms;
  l.overloaded(limit_signal::dropped_handshake, now);
  CHECK(l.decreases() == 2);
  CHECK(l.last_decrease() == limit_signal::dropped_handshake);
}

TEST_CASE("connections dropped by a full listen backlog in the first burst leave the ramp alone, later ones lower it", "[adaptive]") {
  // A first burst of 16 connections against Python's backlog of 5: the connections' pace is the
  // client's to slow; the limit multiplies once the first round's latency is heard.
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.initial = 16;
  adaptive_limit l(st, now);
  simulated_server s;
  s.workers = 1000;
  now += 1ms;
  CHECK_FALSE(l.overloaded(limit_signal::dropped_handshake, now));
  CHECK(l.limit() == 16);
  CHECK(l.slow_start());
  run(l, s, now, 1);
  CHECK(l.limit() == 128);
  CHECK(l.decreases() == 0);
  // Once a round is judged, a dropped connection lowers the limit and ends slow start, as it did.
  now += 1ms;
  CHECK(l.overloaded(limit_signal::dropped_handshake, now));
  CHECK(l.limit() < 128);
  CHECK_FALSE(l.slow_start());
}

TEST_CASE("a dropped handshake of a connection opened before the last decrease lowers nothing", "[adaptive]") {
  // A drop is known 20 ms or more after its connect: against a fast API that is many round trips,
  // and a burst's drops, one a round trip, took the limit from 128 to 4.
  before_a_scaling_server api(16);
  auto& [now, l, s] = api;
  run(l, s, now, 1);
  REQUIRE(l.limit() == 128);
  const auto burst = now;  // the connections of the step to 128 open now
  now += 20ms;
  CHECK(l.overloaded(limit_signal::dropped_handshake, now, burst));
  const auto after = l.limit();
  CHECK(after < 128);
  for (int i = 1; i <= 5; ++i) {  // the rest of the burst, more than a round trip (10 ms) apart
    now += 12ms;
    l.overloaded(limit_signal::dropped_handshake, now, burst);
  }
  CHECK(l.limit() == after);
  CHECK(l.decreases() == 1);
  // A connection opened after the decrease (and the round trip after it, which decreases nothing
  // in any case), dropped: news of the new limit.
  run(l, s, now, 2);
  const auto opened = now;
  now += 20ms;
  CHECK(l.overloaded(limit_signal::dropped_handshake, now, opened));
  CHECK(l.limit() < after);
}

TEST_CASE("a slow tail of a few items is not taken for load", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  adaptive_limit l(st, now);
  // One answer in twenty takes 2 s; the rest 10 ms, whatever the load (a server that never queues).
  for (int r = 0; r < 300; ++r) {
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 0);
    now += 10ms;
    for (std::size_t i = 0; i < n; ++i) l.answered(i % 20 == 7 ? 2s : 10ms, now);
  }
  CHECK(l.decreases() == 0);
  CHECK(l.limit() >= 256);
}

TEST_CASE("at a small limit, one slow item's answer alone is not a latency spike", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.max = 2;  // held at 2: a round trip has one or two answers
  adaptive_limit l(st, now);
  for (int r = 0; r < 50; ++r) {  // 10 ms answers: the moving average learns them
    l.started(1, 0);
    l.started(2, 0);
    now += 10ms;
    l.answered(10ms, now);
    l.answered(10ms, now);
  }
  REQUIRE(l.decreases() == 0);
  // One item takes 2 s; the other slot goes on answering in 10 ms meanwhile, then after it.
  l.started(1, 0);
  now += 2s;
  l.answered(2s, now);
  for (int r = 0; r < 4; ++r) {
    l.started(2, 0);
    now += 10ms;
    l.answered(10ms, now);
  }
  CHECK(l.decreases() == 0);
  CHECK(l.limit() == 2);
}

TEST_CASE("an API answering in microseconds: a millisecond of noise is no latency spike", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  for (int r = 0; r < 200; ++r) {
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 0);
    now += 1ms;
    // 25 us answers, and once the machine's scheduler adds a millisecond for a few round trips.
    for (std::size_t i = 0; i < n; ++i) l.answered(r >= 150 && r < 156 ? 1025us : 25us, now);
  }
  CHECK(l.decreases() == 0);
}

TEST_CASE("the limit follows an API whose latency doubles, down and back up", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  simulated_server s;  // 20 workers, 10 ms each
  run(l, s, now, 600);
  const auto settled = l.limit();
  // The API becomes twice as slow for everyone (its own backend slowed down): answers queue
  // behind each other, and the limit goes down.
  s.service = 20ms;
  run(l, s, now, 8);
  const auto slowed = l.limit();
  CHECK(slowed < settled);
  CHECK(slowed <= 20);  // no more than the workers: every answer waits behind another
  CHECK(l.last_decrease() == limit_signal::latency);
  // Back to its old speed: the limit grows back to keep the server's 20 workers busy.
  s.service = 10ms;
  run(l, s, now, 800);
  CHECK(l.limit() >= std::min<std::size_t>(slowed + 1, 20));  // back up (or held, when it never went below 20)
  CHECK(l.limit() >= 15);                // near 20, or a probe's step below it
  CHECK(l.answers_per_second() >= 1900);  // 20 workers at 10 ms: 2,000 a second at best
}

TEST_CASE("the ceiling clips the limit, and a lower one takes effect at once", "[adaptive]") {
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.max = 16;
  adaptive_limit l(st, now);
  simulated_server s;
  s.workers = 1000;
  run(l, s, now, 60);
  CHECK(l.limit() == 16);
  l.set_max(5);
  CHECK(l.limit() == 5);
  l.set_max(50);
  run(l, s, now, 400);
  CHECK(l.limit() == 50);
}

namespace {

// An event-driven client: as many requests in flight as the limit allows, each answered after
// its own latency (`latency_of(n)` for the n-th request), for `span` of simulated time. Returns
// the answers it got.
template <class LatencyOf>
std::uint64_t run_events(adaptive_limit& l, clock_type::time_point& now, std::chrono::microseconds span, LatencyOf latency_of) {
  using entry = std::pair<clock_type::time_point, std::chrono::microseconds>;  // due, latency
  std::vector<entry> in_flight;
  const auto later = [](const entry& a, const entry& b) { return a.first > b.first; };
  const auto end = now + span;
  std::uint64_t n = 0, answers = 0;
  const auto fill = [&] {
    while (in_flight.size() < l.limit()) {
      l.started(in_flight.size() + 1, 1);  // always more work waiting
      const auto lat = latency_of(n++);
      in_flight.emplace_back(now + lat, lat);
      std::push_heap(in_flight.begin(), in_flight.end(), later);
    }
  };
  fill();
  while (now < end) {
    std::pop_heap(in_flight.begin(), in_flight.end(), later);
    const auto [due, lat] = in_flight.back();
    in_flight.pop_back();
    now = std::max(now, due);
    l.answered(lat, now);
    ++answers;
    fill();
  }
  return answers;
}

}  // namespace

TEST_CASE("a slow tail that holds most slots is not load: the limit grows with the answers it brings", "[adaptive]") {
  // 3% of the items take 2 s, the rest 1 ms, whatever the load (a small API with a slow lookup for
  // some keys): the slow ones hold nearly every slot, so the answers per second grow with the
  // limit. Measured on Python's http.server: 16 answers/s at 1 in flight, 323 at 64.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  std::uint64_t seed = 42;
  const auto latency_of = [&](std::uint64_t) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % 100 < 3 ? std::chrono::microseconds(2'000'000) : std::chrono::microseconds(1'000);
  };
  run_events(l, now, 20s, latency_of);
  CHECK(l.limit() >= 64);
  CHECK(l.lowest() >= 2);
}

TEST_CASE("one round trip slowed by a few milliseconds (a busy machine, a clump of slow items) is no latency spike", "[adaptive]") {
  // A 1 ms API; once, for 18 ms, answers take 6 ms (the client's machine ran a build,
  // or the items sent together in a burst were all slow ones), then 1 ms again. Queueing at the
  // server lasts: one round trip alone is not evidence of it.
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.max = 16;  // held: the test is about the latency guard, not the climb
  adaptive_limit l(st, now);
  std::size_t before = 0;
  for (int r = 0; r < 300; ++r) {
    const auto n = l.limit();
    const bool hiccup = r >= 250 && r < 253;  // 18 ms: one whole round trip (5 ms at least) and more
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 0);
    now += hiccup ? 6ms : 1ms;
    for (std::size_t i = 0; i < n; ++i) l.answered(hiccup ? 6ms : 1ms, now);
    if (r == 249) before = l.limit();
  }
  CHECK(l.decreases() == 0);
  CHECK(l.limit() >= before);
}

TEST_CASE("a clump of slow items answering together is no latency spike when the next round trip is fast again", "[adaptive]") {
  // A 20 ms API where a few items take 2 s: the slow ones sent together in one burst answer
  // together, and for one round trip they are all there is. Then 20 ms answers again.
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.max = 16;
  adaptive_limit l(st, now);
  std::size_t before = 0;
  for (int r = 0; r < 300; ++r) {
    const auto n = l.limit();
    const bool clump = r == 250;
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 0);
    now += 20ms;
    for (std::size_t i = 0; i < n; ++i) l.answered(clump ? 2s : 20ms, now);
    if (r == 249) before = l.limit();
  }
  CHECK(l.decreases() == 0);
  CHECK(l.limit() >= before);
}

TEST_CASE("against an API fastest one request at a time, probes that find nothing come ever more rarely", "[adaptive]") {
  // Python's http.server with Connection: close, measured: 2,234 answers/s one at a time, 1,668
  // at two (its threads fight over one lock). Each probe to 2 costs a period at 0.75 of the speed;
  // probing every third period kept the limit there a third of the time (0.71 of the best).
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  const auto latency = [](std::size_t n) {
    const double us = 450.0 * static_cast<double>(n) * (1 + 0.33 * static_cast<double>(n - 1));
    return std::chrono::microseconds(static_cast<std::int64_t>(us));
  };
  auto at_one = 0us, total = 0us;
  const auto warm = now + 5s;
  while (now < warm + 60s) {
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 1);
    const auto lat = latency(n);
    now += lat;
    for (std::size_t i = 0; i < n; ++i) l.answered(lat, now);
    if (now > warm) {
      total += lat;
      if (n == 1) at_one += lat;
    }
  }
  CHECK(l.limit() <= 2);
  CHECK(static_cast<double>(at_one.count()) / static_cast<double>(total.count()) >= 0.85);
}

TEST_CASE("a server whose latency grows with its load: probes up are kept while each brings a few more answers", "[adaptive]") {
  // 5 ms, and 2 ms more for each call in flight (every request contends for one lock): 8 in flight
  // answer 381 a second, 16 432, 32 464, 256 495. A probe a quarter up is 13-22% later and brings
  // 2-10% more answers; kept only where the latency rose by half the step or less (11% more
  // answers), the limit sat at 8-10 (0.78 of the best). By Little's law, latency that rose less
  // than the step is more answers: kept where they are 3% more, the limit holds at 15 (a probe
  // 12 -> 15 is 3.6% more; 15 -> 18 2.4%, refused; one down to 12 loses 3.4%, refused too).
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  std::size_t highest = 0, lowest_late = 1000;
  const auto late = now + 40s, end = now + 60s;
  while (now < end) {
    const auto n = l.limit();
    highest = std::max(highest, n);
    if (now >= late) lowest_late = std::min(lowest_late, n);
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 1);
    const auto lat = std::chrono::microseconds(5'000 + 2'000 * static_cast<std::int64_t>(n));
    now += lat;
    for (std::size_t i = 0; i < n; ++i) l.answered(lat, now);
  }
  CHECK(lowest_late >= 12);
  CHECK(highest <= 32);  // no run up the slope: 32 is 7% more answers than 16 for 86% more latency
}

TEST_CASE("after slow start's cut, probes up halve the way back to where slow start stopped while each is kept", "[adaptive]") {
  // The load-dependent server above: slow start's step 2 -> 16 meets 37 ms against 9, and the cut
  // by the ratio (a queue's rule) lands at 3, where 16 in flight answered 432 a second and 3 answer
  // 273. Probes a quarter up took 3 -> 4 -> 5 -> ... -> 12 in eight probes and 3.1 s (seen in
  // this test); halfway back each, 3 -> 6 -> 9 -> 12 in four and 1.7 s; each of those probes
  // confirmed by one period, not two, in 1.4 s.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  const auto start = now;
  std::size_t after_cut = 0, probes_up = 0, highest_after_cut = 0;
  auto reached_12 = clock_type::time_point{};
  while (now < start + 10s) {
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 1);
    const auto lat = std::chrono::microseconds(5'000 + 2'000 * static_cast<std::int64_t>(n));
    now += lat;
    for (std::size_t i = 0; i < n; ++i) l.answered(lat, now);
    if (!l.slow_start() && after_cut == 0) after_cut = l.limit();
    if (after_cut == 0) continue;
    if (l.limit() > n) ++probes_up;
    if (l.limit() >= 12 && reached_12 == clock_type::time_point{}) reached_12 = now;
    if (reached_12 == clock_type::time_point{}) highest_after_cut = std::max(highest_after_cut, l.limit());
  }
  INFO("cut to " << after_cut << ", " << probes_up << " probes up in 10 s, 12 reached after "
       << std::chrono::duration_cast<std::chrono::milliseconds>(reached_12 - start).count() << " ms");
  CHECK(after_cut <= 4);
  REQUIRE(reached_12 != clock_type::time_point{});
  CHECK(reached_12 - start <= 1500ms);
  CHECK(highest_after_cut <= 16);  // never past where slow start stopped on the way back
  CHECK(l.limit() <= 32);          // and after it, the probe rule's own stop (15-18)
}

TEST_CASE("a slow start ended by 429s or timeouts has no way back: probes up go a quarter at a time", "[adaptive]") {
  // 4 at once, 429 past them (or no answer in time), 2 ms answers: slow start's 2 -> 16 is cut.
  // The cap is said, and a timeout may be a billed call retried: halfway back to 16 would be 8,
  // four refused or timed-out calls a probe.
  const auto why = GENERATE(limit_signal::throttled, limit_signal::timeout);
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  std::size_t highest_after = 0;
  bool ended = false;
  for (int r = 0; r < 3000; ++r) {
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 1);
    now += 2ms;
    for (std::size_t i = 0; i < n; ++i) {
      if (i < 4) l.answered(2ms, now);
      else if (why == limit_signal::throttled) l.refused(why, now);
      else l.overloaded(why, now);
    }
    if (!l.slow_start() && l.limit() <= 4) ended = true;  // (the losses' cuts: 16 -> 13 -> 4, or by 0.7)
    if (ended) highest_after = std::max(highest_after, l.limit());
  }
  REQUIRE(ended);
  CHECK(l.last_decrease() == why);
  CHECK(highest_after <= 5);
}

TEST_CASE("a probe up that makes the server queue goes back to where it started, no lower", "[adaptive]") {
  // 20 workers, and past them latency that grows steeply (a server thrashing): a probe to 25 in
  // flight doubles the latency. The spike is the probe's doing: back to 20, not half of 25.
  auto now = clock_type::time_point{} + 100s;
  adaptive_limit l(settings(), now);
  std::size_t lowest_late = 1000;
  for (int r = 0; r < 900; ++r) {
    const auto n = l.limit();
    const double over = std::max(1.0, static_cast<double>(n) / 20);
    const auto lat = std::chrono::microseconds(static_cast<std::int64_t>(10'000 * over * over * over));
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 1);
    now += lat;
    for (std::size_t i = 0; i < n; ++i) l.answered(lat, now);
    if (r >= 300) lowest_late = std::min(lowest_late, l.limit());
  }
  CHECK(l.decreases() > 0);     // the probes did make it queue
  CHECK(lowest_late >= 15);     // a probe down (a quarter below 20) at the lowest
}

TEST_CASE("against an API fastest one request at a time and flat past it, jittery answers per second do not keep the limit above it", "[adaptive]") {
  // Measured against Python's http.server, Connection: close: 2,425 answers/s at 1 in flight,
  // 1,618-1,790 at anything from 2 to 32. And the machine is shared (2 cores, the server beside
  // the client): for 100 ms at a time everything is up to 30% slower or faster. Across that
  // plateau a probe up is "kept" by chance as often as not, and the limit wandered between 4
  // and 8 for the whole run (0.70 of one at a time).
  auto now = clock_type::time_point{} + 100s;
  auto st = settings();
  st.initial = 6;  // where slow start left it in that run (8, less a dropped handshake's decrease)
  adaptive_limit l(st, now);
  std::uint64_t seed = 7;
  const auto jitter = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return 0.7 + 0.6 * static_cast<double>(seed >> 11) / static_cast<double>(1ULL << 53);
  };
  double speed = 0, total = 0;  // the time at each limit, weighted by its speed against the best
  // Within a run of seconds, not a minute: 10,000 items at 2,000 a second.
  const auto warm = now + 1s;
  auto next_draw = now;
  double slowed = 1;
  while (now < warm + 10s) {
    if (now >= next_draw) {
      slowed = jitter();
      next_draw = now + 100ms;
    }
    const auto n = l.limit();
    for (std::size_t i = 0; i < n; ++i) l.started(i + 1, 1);
    const double per_s = n == 1 ? 2425.0 : 1750.0;
    const auto lat = std::chrono::microseconds(static_cast<std::int64_t>(1e6 * static_cast<double>(n) / per_s * slowed));
    now += lat;
    for (std::size_t i = 0; i < n; ++i) l.answered(lat, now);
    if (now > warm) {
      total += static_cast<double>(lat.count());
      speed += static_cast<double>(lat.count()) * per_s / 2425.0;
    }
  }
  CHECK(speed / total >= 0.85);  // was 0.72: the plateau's speed, the limit wandering on it
}

TEST_CASE("after a refusal that paused the whole origin, no probe up before the time hold_probes gave", "[adaptive]") {
  // A token bucket answering 429 Retry-After: 1: each probe past its rate costs every call a
  // second's pause, so the limit holds where it is for a while (origin_limit holds 20 waits).
  const simulated_server server;  // 20 workers: past 20 at once, answers queue
  const auto highest_within = [&](bool held) {
    auto now = clock_type::time_point{} + 100s;
    adaptive_limit l(settings(), now);
    run(l, server, now, 40);  // slow start over, held near the server's 20
    const auto from = l.limit();
    if (held) l.hold_probes(now, 10s);
    std::size_t highest = 0;
    for (const auto end = now + 9s; now < end;) {
      run(l, server, now, 1);
      highest = std::max(highest, l.limit());
    }
    return std::pair{from, highest};
  };
  const auto [from, highest] = highest_within(true);
  CHECK(highest <= from);
  const auto [free_from, free_highest] = highest_within(false);
  CHECK(free_highest > free_from);  // the same run probes up when not held
}

TEST_CASE("a refusal that paused every call halves the limit at least, not to the share that got through", "[adaptive]") {
  // A token bucket (400 a second, 20 saved up) answering 429 Retry-After: 1 to a client at 16
  // calls of 5 ms: after each pause the bucket is full again, 20 calls pass and the next is
  // refused, 1 of 20: the share that got through took 16 -> 14 -> 10 -> ... -> 1, one second's
  // pause of every call at each step (8 pauses, the first 8 s of a run mostly stopped).
  const simulated_server fine{std::chrono::microseconds(5'000), 1000};
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(16, now);
  run(l, fine, now, 40);
  REQUIRE(l.limit() >= 16);
  int pauses = 0;
  while (l.limit() > 2 && pauses < 20) {
    for (std::size_t i = 0; i < 19; ++i) l.answered(5ms, now);
    l.hold_probes(now, 20s);
    l.refused(limit_signal::throttled, now, true);
    ++pauses;
    now += 1s;          // every call waits the second
    run(l, fine, now, 3);  // the calls after it, answered
  }
  INFO(pauses << " pauses to come down to " << l.limit());
  CHECK(pauses <= 3);  // 16 -> 8 -> 4 -> 2
  CHECK(l.limit() >= 2);
}

TEST_CASE("after a refusal that paused every call, the hold before a probe up shrinks with what the probe may gain", "[adaptive]") {
  // The hold is the price of a probe's refusal (every call paused) against its gain. A quarter up
  // gains a quarter at most: held the whole hold. From 1 to 2 the answers may double: held a
  // quarter of it (20 s at one call, 5 s the rule now; a run of 28 s spent 20 of them at 1 where
  // 2 was the API's rate).
  const simulated_server fine{std::chrono::microseconds(5'000), 1000};
  const auto first_probe_after = [&](double at) {
    auto now = clock_type::time_point{} + 100s;
    auto l = ended_slow_start_at(at, now);
    run(l, fine, now, 10);
    const auto from = l.limit();
    const auto held_at = now;
    l.hold_probes(now, 20s);
    while (now < held_at + 40s) {
      run(l, fine, now, 1);
      if (l.limit() > from) return now - held_at;
    }
    return clock_type::duration(40s);
  };
  const auto from_one = first_probe_after(1);
  CHECK(from_one >= 5s);
  CHECK(from_one <= 6s);
  CHECK(first_probe_after(8) >= 20s);
}

TEST_CASE("a probe refused with a pause again doubles the hold before the next", "[adaptive]") {
  // A token bucket refuses every probe past its rate: a pause every hold (20 s) is a twentieth of
  // the run paused for nothing; the second hold is 40 s.
  const simulated_server fine{std::chrono::microseconds(5'000), 1000};
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(8, now);
  run(l, fine, now, 10);
  const auto rises_after = [&](clock_type::time_point from) {
    const auto at = l.limit();
    while (now < from + 100s) {
      run(l, fine, now, 1);
      if (l.limit() > at) return now - from;
    }
    return clock_type::duration(100s);
  };
  l.hold_probes(now, 20s);
  const auto first = rises_after(now);
  CHECK(first >= 20s);
  CHECK(first < 21s);
  l.hold_probes(now, 20s);  // the probe refused (and its pause)
  l.refused(limit_signal::throttled, now, true);
  const auto refused_at = now;
  now += 1s;
  CHECK(rises_after(refused_at) >= 40s);
}

TEST_CASE("a probe up refused with a pause goes back to where it started", "[adaptive]") {
  // At 2 a token bucket passes every call; a probe to 3 is refused (Retry-After: 1). Halved, 3
  // would be 1: half the answers until the next probe, a hold away.
  const simulated_server fine{std::chrono::microseconds(5'000), 1000};
  auto now = clock_type::time_point{} + 100s;
  auto l = ended_slow_start_at(2, now);
  std::size_t guard = 0;
  while (l.limit() <= 2 && ++guard < 10'000) run(l, fine, now, 1);
  REQUIRE(l.limit() == 3);
  for (std::size_t i = 0; i < 8; ++i) l.answered(5ms, now);
  now += 6ms;
  l.hold_probes(now, 20s);
  l.refused(limit_signal::throttled, now, true);
  now += 1s;
  run(l, fine, now, 3);
  CHECK(l.limit() == 2);
}

TEST_CASE("requests are scarce once the limit went down for a 429 or a queue, or sits at its ceiling, not for a full backlog",
          "[adaptive]") {
  // What lets batches grow (batch_processor::judge_growth): more rows a request pay only where
  // the requests are what holds the rows back.
  const auto ramped = [](origin_limit& o, clock_type::time_point& now) { full_round_trips(o, now, 2); };  // 2 -> 16 -> 128
  const auto went_down = [](origin_limit& o, clock_type::time_point& now, auto signal) {
    const auto before = o.limit();
    for (int i = 0; i < 100 && o.limit() >= before; ++i) {
      now += 1ms;
      signal(o, now);
    }
    return o.limit() < before;
  };
  auto now = clock_type::time_point{} + 100s;
  origin_limit backlog("http://api:80", settings(), now);
  ramped(backlog, now);
  REQUIRE(backlog.limit() < 1000);
  CHECK_FALSE(backlog.requests_scarce());
  REQUIRE(went_down(backlog, now, [](origin_limit& o, auto t) { o.overloaded(limit_signal::dropped_handshake, t); }));
  CHECK_FALSE(backlog.requests_scarce());

  origin_limit throttled("http://api:80", settings(), now);
  ramped(throttled, now);
  CHECK_FALSE(throttled.requests_scarce());
  REQUIRE(went_down(throttled, now, [](origin_limit& o, auto t) { o.answered(10ms, 429, false, t); }));
  CHECK(throttled.requests_scarce());

  origin_limit queued("http://api:80", settings(), now);
  ramped(queued, now);
  CHECK_FALSE(queued.requests_scarce());
  full_round_trips(queued, now, 10, 100ms, [&] { return queued.limit() < 128; });  // ten times slower: a queue
  REQUIRE(queued.limit() < 128);
  CHECK(queued.requests_scarce());

  auto low_ceiling = settings();
  low_ceiling.max = 2;  // --concurrency of two batches: the limit starts at its ceiling
  origin_limit capped("http://api:80", low_ceiling, now);
  CHECK(capped.requests_scarce());
}

TEST_CASE("a queue or the API's refusal says requests are scarce, a connection's trouble does not", "[adaptive]") {
  for (const auto why : {limit_signal::latency, limit_signal::throttled, limit_signal::unavailable}) {
    INFO(to_string(why));
    CHECK(says_requests_scarce(why));
  }
  for (const auto why : {limit_signal::none, limit_signal::timeout, limit_signal::reset, limit_signal::refused,
                         limit_signal::dropped_handshake}) {
    INFO(to_string(why));
    CHECK_FALSE(says_requests_scarce(why));
  }
}
