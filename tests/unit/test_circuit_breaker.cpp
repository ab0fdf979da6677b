// The API-outage breaker's states, with a clock the test moves: it opens after N distinct items'
// API-level failures in a row, sends one probe when due (a different item each time), doubles its
// wait while probes fail, ignores what calls sent before it opened say, and closes on the first
// answer.
#include <engine/src/circuit_breaker.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;
using breaker_state = circuit_breaker::state;

namespace {
circuit_breaker make(std::size_t trip_after = 3) {
  return circuit_breaker(circuit_breaker::settings{trip_after, 1000ms, 4000ms, 500ms});
}
}  // namespace

TEST_CASE("the breaker opens after N distinct items' failures in a row, not N in all", "[circuit]") {
  const auto t0 = circuit_breaker::clock::time_point{} + 100s;
  auto b = make();
  CHECK_FALSE(b.failed("a", "refused", t0));
  CHECK_FALSE(b.failed("b", "refused", t0));
  CHECK_FALSE(b.answered());  // an answer between them: the count starts again
  CHECK_FALSE(b.failed("c", "refused", t0));
  CHECK_FALSE(b.failed("d", "refused", t0));
  CHECK(b.closed());
  CHECK(b.failed("e", "connect: Connection refused", t0));  // no answer from three items: down at once
  CHECK(b.current() == breaker_state::open);
  CHECK(b.last_reason() == "connect: Connection refused");
  CHECK_FALSE(b.failed("g", "late", t0 + 600ms));  // calls sent before it opened say nothing new
  CHECK(b.current() == breaker_state::open);
}

TEST_CASE("5xx answers open the breaker only once the failures in a row span the minimum outage", "[circuit]") {
  const auto t0 = circuit_breaker::clock::time_point{} + 100s;
  auto b = make();
  CHECK_FALSE(b.failed("a", "HTTP 503", t0, true));
  CHECK_FALSE(b.failed("b", "HTTP 503", t0 + 100ms, true));
  CHECK_FALSE(b.failed("c", "HTTP 503", t0 + 200ms, true));  // three items, but within 500 ms: not yet
  CHECK(b.closed());
  CHECK(b.failed("d", "HTTP 503", t0 + 500ms, true));
  CHECK(b.current() == breaker_state::open);
}

TEST_CASE("5xx answers in a row that span the minimum outage open the breaker when time passes, with no further failure", "[circuit]") {
  // Every pipeline may be waiting on a failed item: no new failure comes, time alone tells.
  const auto t0 = circuit_breaker::clock::time_point{} + 100s;
  auto b = make();
  CHECK_FALSE(b.failed("a", "HTTP 503", t0, true));
  CHECK_FALSE(b.failed("b", "HTTP 503", t0, true));
  CHECK_FALSE(b.outage_held(t0 + 600ms));  // two items: not enough witnesses, however long
  CHECK_FALSE(b.failed("c", "HTTP 503", t0 + 10ms, true));
  CHECK_FALSE(b.outage_held(t0 + 499ms));  // three, not yet over 500 ms
  CHECK(b.outage_held(t0 + 500ms));
  CHECK(b.current() == breaker_state::open);
  CHECK_FALSE(b.outage_held(t0 + 501ms));  // opened once
  b.answered();
  CHECK_FALSE(b.outage_held(t0 + 2s));  // an answer ended the streak
}

TEST_CASE("a burst of 503s with answers between them (an API that limits its rate) opens nothing", "[circuit]") {
  auto t = circuit_breaker::clock::time_point{} + 100s;
  auto b = make();
  for (int i = 0; i < 1000; ++i) {
    t += 1ms;
    for (int k = 0; k < 4; ++k) CHECK_FALSE(b.failed("i" + std::to_string(i * 4 + k), "HTTP 503", t, true));
    b.answered();  // one request in five gets through
  }
  CHECK(b.closed());
}

TEST_CASE("one item failing again and again is that item's trouble, not an outage", "[circuit]") {
  const auto t0 = circuit_breaker::clock::time_point{} + 100s;
  auto b = make();
  for (int i = 0; i < 20; ++i) CHECK_FALSE(b.failed("poisoned", "HTTP 500", t0 + i * 100ms, true));
  CHECK_FALSE(b.failed("other", "HTTP 500", t0 + 2s, true));
  CHECK(b.closed());
  CHECK(b.failures_in_a_row() == 2);
}

TEST_CASE("an open breaker lets one probe through when due, and backs off while probes fail", "[circuit]") {
  const auto t0 = circuit_breaker::clock::time_point{} + 100s;
  auto b = circuit_breaker(circuit_breaker::settings{1, 1000ms, 4000ms, 1ms});
  REQUIRE(b.failed("a", "refused", t0));
  CHECK_FALSE(b.probe_due(t0 + 999ms));
  CHECK(b.probe_due(t0 + 1000ms));
  b.probe_sent("p1");
  CHECK(b.current() == breaker_state::probing);
  CHECK(b.is_probe("p1"));
  CHECK_FALSE(b.probe_due(t0 + 5s));  // one probe at a time

  // A call sent before the circuit opened fails meanwhile: it is not the probe, nothing changes.
  CHECK_FALSE(b.failed("late", "refused", t0 + 1s));
  CHECK(b.current() == breaker_state::probing);

  CHECK_FALSE(b.failed("p1", "refused", t0 + 1s));  // the probe failed: open again, twice the wait
  CHECK(b.current() == breaker_state::open);
  CHECK(b.probe_delay() == 2000ms);
  CHECK_FALSE(b.probe_due(t0 + 2999ms));
  CHECK(b.probe_due(t0 + 3000ms));
  CHECK(b.was_probed("p1"));
  CHECK_FALSE(b.was_probed("p2"));
  b.probe_sent("p2");
  b.failed("p2", "refused", t0 + 3s);
  CHECK(b.probe_delay() == 4000ms);
  b.probe_sent("p4");
  b.failed("p4", "refused", t0 + 7s);
  CHECK(b.probe_delay() == 4000ms);  // capped at probe_max

  b.probe_sent("p3");
  CHECK(b.answered());  // the API answered the probe: closed, and the next trip starts from the minimum
  CHECK(b.closed());
  CHECK_FALSE(b.was_probed("p1"));  // a new outage probes afresh
  CHECK_FALSE(b.answered());
  REQUIRE(b.failed("a", "refused", t0 + 20s));
  CHECK(b.probe_delay() == 1000ms);
}

TEST_CASE("a breaker with trip_after 0 never opens", "[circuit]") {
  auto b = make(0);
  for (int i = 0; i < 100; ++i)
    CHECK_FALSE(b.failed(std::to_string(i), "refused", circuit_breaker::clock::time_point{}));
  CHECK(b.closed());
}

TEST_CASE("only the probe's own call that tells nothing is followed by another after the same wait", "[circuit]") {
  const auto t0 = circuit_breaker::clock::time_point{} + 100s;
  auto b = circuit_breaker(circuit_breaker::settings{1, 1000ms, 4000ms, 1ms});
  REQUIRE(b.failed("a", "refused", t0));
  b.probe_sent("p");
  b.inconclusive("other", t0 + 1s);  // another pipeline's abandoned call: the probe is still out
  CHECK(b.current() == breaker_state::probing);
  CHECK_FALSE(b.probe_due(t0 + 10s));
  b.inconclusive("p", t0 + 1s);
  CHECK(b.current() == breaker_state::open);
  CHECK(b.probe_delay() == 1000ms);
  CHECK(b.probe_due(t0 + 2s));
  b.inconclusive("p", t0 + 5s);  // not probing: nothing changes
  CHECK(b.probe_due(t0 + 2s));
}
