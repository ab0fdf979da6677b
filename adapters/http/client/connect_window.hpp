// How many new connections to one API origin may wait at once to be proven (pure; unit-tested
// without a server).
//
// Why: a server's kernel completes handshakes into a listen backlog that the server empties with
// accept(). Python's http.server has a backlog of 5; a client that opens 16 connections in the
// same instant (the adaptive limit doubling from 16 to 32) overflows it, the kernel drops the
// handshakes' last ACKs, and each of those requests waits for a retransmission (measured on the
// bench's slow-tail API: three "backlog full" decreases of the limit, 32 -> 10, in one run). A
// connection proves it was accepted when the server's kernel acknowledges its request (the
// handshake completed and the backlog took it: tcp_signals.hpp), or an answer comes back on it;
// until then it counts here. By the answer alone, against an API answering in 500 ms, a few
// connections opened per round trip and a thousand took twenty seconds.
// The window starts below the smallest common backlog and grows by one per window's worth of
// connections proven that were opened while it was full (by one a round trip, as TCP's congestion
// avoidance; growing by one per connection, as its slow start, the window doubled with the limit
// and let 16 connects through at once: the same overflow). A dropped handshake halves it, and it
// never grows past that again: the server's backlog does not change during a run. Kept-alive
// connections are opened once: a few at a time costs a few round trips of the first seconds. A
// server that closes every connection after its answer proves one per request: the window grows
// by one a round trip, as far as the limit asks.
#pragma once

#include <chrono>
#include <cstddef>

namespace dibs::http {

class connect_window {
 public:
  static constexpr double initial = 4;  // below Python's backlog of 5 (socketserver's default)
  static constexpr double floor = 2;

  // New connections that may wait for their first answer at once.
  std::size_t allowed() const { return static_cast<std::size_t>(allowed_); }
  // A new connection's first answer came back: the server accepts connections as fast as this.
  // `was_full`: the window was full when it was opened (the pace held requests back).
  void proven(bool was_full, std::size_t ceiling);
  // A new connection's handshake was dropped (its request never acknowledged): too many at once.
  // Once per burst: drops before the next connection proven change nothing more, nor do drops of
  // connections opened before the last cut (`opened`, `now`: a drop is known 20 ms and more after
  // its connect, and a burst's drops trickled in as other connections were proven between them:
  // against an HTTP/1.0 server with a listen backlog of 5, one burst halved the window three
  // times, to 2, and a pace of 2 held the run to 1,700 answers a second where 8 calls gave 2,500).
  void dropped(std::chrono::steady_clock::time_point opened = {}, std::chrono::steady_clock::time_point now = {});

 private:
  double allowed_ = initial;
  double cap_ = 0;  // since a dropped handshake: the most it may grow to (0: none yet)
  double proven_ = 0;  // proven since the window last grew
  bool dropped_since_proven_ = false;  // a drop already halved it for this burst
  std::chrono::steady_clock::time_point cut_at_{};  // when a drop last halved it
};

}  // namespace dibs::http
