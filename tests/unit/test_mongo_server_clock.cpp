// The MongoDB server's clock as the store sees it, with injected clocks: the server's localTime at
// the last measurement plus the steady time since; a step of this machine's wall clock moves
// nothing.
#include <adapters/mongo/refresh_gate.hpp>
#include <adapters/mongo/server_clock.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

using namespace dibs;
using namespace dibs::mongo;
using namespace std::chrono_literals;

namespace {
struct fake_clocks {
  store_time wall = store_time{} + 1'700'000'000'000ms;
  server_clock::steady::time_point mono = server_clock::steady::time_point{} + 1000s;
  server_clock make(std::chrono::milliseconds tolerance = 1000ms) {
    return server_clock(tolerance, [this] { return wall; }, [this] { return mono; });
  }
};
}  // namespace

TEST_CASE("the server's time follows the steady clock from the last measurement, not the wall clock", "[mongo][clock]") {
  fake_clocks c;
  auto clock = c.make();
  CHECK_FALSE(clock.measured());
  CHECK(clock.now() == c.wall);  // nothing measured yet: this machine's clock

  const auto server = c.wall + 3600s;  // the server runs an hour ahead
  // The request took 40 ms; the server read its clock in the middle.
  CHECK_FALSE(clock.record(server, c.mono, c.mono + 40ms));
  c.mono += 40ms;
  c.wall += 40ms;
  CHECK(clock.now() == server + 20ms);
  CHECK(clock.offset() == 3600s - 20ms);
  CHECK(clock.uncertainty() == 21ms);  // half the round trip, and the server's rounding to the millisecond

  c.mono += 10s;
  c.wall += 10s;
  CHECK(clock.now() == server + 10s + 20ms);

  // This machine's wall clock is stepped an hour forward (and then back): the server's time does not move.
  c.wall += 3600s;
  CHECK(clock.now() == server + 10s + 20ms);
  CHECK(clock.offset() == -20ms);  // only the offset to the (stepped) wall clock shows the step
  c.wall -= 7200s;
  CHECK(clock.now() == server + 10s + 20ms);
}

TEST_CASE("a measurement far from what the steady estimate predicted is reported, a close one is not", "[mongo][clock]") {
  fake_clocks c;
  auto clock = c.make(1000ms);
  const auto server = c.wall;
  REQUIRE_FALSE(clock.record(server, c.mono, c.mono));
  c.mono += 30s;
  // 30 s later the server says 30.4 s later: within the tolerance (drift, network).
  CHECK_FALSE(clock.record(server + 30'400ms, c.mono, c.mono));
  CHECK(clock.now() == server + 30'400ms);
  c.mono += 30s;
  // The server's clock was stepped back 5 s: reported once, and the new time is adopted.
  const auto jump = clock.record(server + 55'400ms, c.mono, c.mono);
  REQUIRE(jump);
  CHECK(*jump == -5000ms);
  CHECK(clock.now() == server + 55'400ms);
  c.mono += 30s;
  CHECK_FALSE(clock.record(server + 85'400ms, c.mono, c.mono));  // consistent again: nothing to say
  // A slow round trip widens what is tolerated by half of it.
  c.mono += 30s;
  CHECK_FALSE(clock.record(server + 116'900ms, c.mono - 2s, c.mono + 2s));
}

TEST_CASE("a clock refresh due once is taken by one caller of many, and due again an interval later",
          "[mongo][clock][refresh]") {
  using steady = refresh_gate::steady;
  const auto t0 = steady::time_point{} + 1000s;
  refresh_gate gate(30s);
  gate.mark(t0);
  CHECK_FALSE(gate.take(t0 + 29s));
  // Eight callers find the refresh due at the same reading: one measures, the rest go on.
  std::atomic<int> taken{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i)
    callers.emplace_back([&] {
      if (gate.take(t0 + 30s)) ++taken;
    });
  for (auto& c : callers) c.join();
  CHECK(taken == 1);
  CHECK_FALSE(gate.take(t0 + 31s));  // the one taken counts as the last refresh
  CHECK(gate.take(t0 + 60s));
  gate.mark(t0 + 70s);  // a measurement made otherwise (at start) also counts
  CHECK_FALSE(gate.take(t0 + 90s));
}
