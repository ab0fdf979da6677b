// The window of new connections waiting for their first answer (adapters/http/client/connect_window.hpp).
#include "adapters/http/client/connect_window.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

namespace {
// A round trip in which the whole window is opened, held back, and proven.
void round_trip(connect_window& w, std::size_t ceiling) {
  const auto n = w.allowed();
  for (std::size_t i = 0; i < n; ++i) w.proven(true, ceiling);
}
}  // namespace

TEST_CASE("new connections: a few at first, one more a round trip while the pace holds requests back", "[connect-window]") {
  connect_window w;
  CHECK(w.allowed() == 4);  // below Python's backlog of 5
  round_trip(w, 64);
  CHECK(w.allowed() == 5);
  for (int i = 0; i < 5; ++i) round_trip(w, 64);
  CHECK(w.allowed() == 10);
  for (int i = 0; i < 50; ++i) w.proven(false, 64);  // nobody waited: nothing learnt of a bigger burst
  CHECK(w.allowed() == 10);
}

TEST_CASE("new connections: a dropped handshake halves the window, and it grows no further than that again", "[connect-window]") {
  connect_window w;
  for (int i = 0; i < 8; ++i) round_trip(w, 64);
  REQUIRE(w.allowed() == 12);
  w.dropped();
  CHECK(w.allowed() == 6);
  w.dropped();  // another handshake of the same burst
  w.dropped();
  CHECK(w.allowed() == 6);
  for (int i = 0; i < 20; ++i) round_trip(w, 64);
  CHECK(w.allowed() == 6);  // the server's backlog did not grow
  for (int i = 0; i < 5; ++i) {
    w.dropped();
    w.proven(false, 64);  // a burst of its own each time
  }
  CHECK(w.allowed() == 2);  // never below two
}

TEST_CASE("new connections: the window grows no higher than the requests that may be in flight", "[connect-window]") {
  connect_window w;
  for (int i = 0; i < 100; ++i) round_trip(w, 10);
  CHECK(w.allowed() == 10);
  for (int i = 0; i < 100; ++i) round_trip(w, 2);  // the limit came down: the window stays where it was
  CHECK(w.allowed() == 10);
  connect_window small;
  for (int i = 0; i < 100; ++i) round_trip(small, 1);
  CHECK(small.allowed() == 4);  // the first few are always allowed
}

TEST_CASE("new connections: a drop of a connection opened before the last cut halves nothing", "[connect-window]") {
  // A drop is known 20 ms or more after its connect; connections proven meanwhile do not make the
  // rest of its burst a burst of its own.
  using namespace std::chrono_literals;
  const auto t0 = std::chrono::steady_clock::time_point{} + 100s;
  connect_window w;
  for (int i = 0; i < 8; ++i) round_trip(w, 64);
  REQUIRE(w.allowed() == 12);
  w.dropped(t0, t0 + 20ms);
  CHECK(w.allowed() == 6);
  w.proven(false, 64);
  w.dropped(t0 + 1ms, t0 + 25ms);  // opened before the cut
  CHECK(w.allowed() == 6);
  w.proven(false, 64);
  w.dropped(t0 + 21ms, t0 + 45ms);  // opened after it
  CHECK(w.allowed() == 3);
}
