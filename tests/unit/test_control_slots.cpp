// Who gives up a control slot when they are all taken (control_slots.hpp), without sockets.
#include "adapters/control/control_slots.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;
using slot_state = control_slots::state;
using namespace std::chrono_literals;

TEST_CASE("a new connection takes the slot of the one idle longest, never of one being answered", "[controls][unit][slots]") {
  control_slots s(3, 3);
  const auto t0 = control_slots::clock::now();
  const auto a = s.add("127.0.0.1", t0), b = s.add("127.0.0.1", t0 + 1s), c = s.add("127.0.0.1", t0 + 2s);
  // a answered a request at t0+5s and waits again; b and c have waited since they came.
  s.set(a, slot_state::idle, t0 + 5s);
  auto v = s.admit("127.0.0.1");
  CHECK(v.admit);
  CHECK(v.evict == b);
  // Reading a request (however long) gives way only after every idle one ...
  s.set(b, slot_state::reading, t0 + 6s);
  s.set(c, slot_state::reading, t0 + 3s);
  CHECK(s.admit("127.0.0.1").evict == a);
  s.set(a, slot_state::answering, t0 + 7s);
  CHECK(s.admit("127.0.0.1").evict == c);  // ... the one sending its request longest first
  // ... and one being answered never does.
  s.set(b, slot_state::answering, t0 + 8s);
  s.set(c, slot_state::answering, t0 + 8s);
  CHECK_FALSE(s.admit("127.0.0.1").admit);
  s.remove(c);
  v = s.admit("127.0.0.1");
  CHECK(v.admit);
  CHECK_FALSE(v.evict);  // a free slot: nobody gives way
}

TEST_CASE("a peer holds at most its share: its next connection takes the place of its own", "[controls][unit][slots]") {
  control_slots s(4, 2);
  const auto t0 = control_slots::clock::now();
  const auto scraper = s.add("10.0.0.9", t0);  // Prometheus, idle since its last scrape: the oldest
  const auto x1 = s.add("10.0.0.66", t0 + 1s), x2 = s.add("10.0.0.66", t0 + 2s);
  auto v = s.admit("10.0.0.66");  // its third: a free slot, but its share is taken
  CHECK(v.admit);
  CHECK(v.evict == x1);
  s.remove(x1);
  const auto x3 = s.add("10.0.0.66", t0 + 3s);
  CHECK(s.of_peer("10.0.0.66") == 2);
  // With every slot taken, the peer holding the most gives way, even though the scraper has
  // waited longest.
  s.add("10.0.0.7", t0 + 4s);
  v = s.admit("10.0.0.8");
  CHECK(v.admit);
  CHECK(v.evict == x2);
  CHECK(v.evict != scraper);
  // A peer whose connections are all being answered gets no slot of another peer's.
  s.set(x2, slot_state::answering, t0 + 5s);
  s.set(x3, slot_state::answering, t0 + 5s);
  CHECK_FALSE(s.admit("10.0.0.66").admit);
}
