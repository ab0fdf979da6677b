// The control server's connection slots, and who gives one up when they are all taken. Without
// this, sixteen idle kept-alive connections that send a request every 29 s (under the 30 s idle
// timeout) held every slot, and the operator's `curl .../pause` and Prometheus' scrapes were
// closed unanswered. So a new connection is always let in when some slot holder can give way:
//   - a peer (an IP address) holds at most `per_peer` connections: its next one takes the place
//     of its own longest-waiting one, so one peer can't push out everyone else's;
//   - when every slot is taken, the new connection takes the place of a connection of the peer
//     that holds the most; of that peer's, the one waiting longest for its next request (idle),
//     else the one that has been sending its request longest (a slow one: a client that sends
//     its request in one go is reading for well under a millisecond);
//   - a connection whose request is being answered is never dropped: its answer is on its way.
// A connection that has just been let in waits for its first request, so it is the youngest
// idle one, the last one dropped. On loopback every local process is the same peer (127.0.0.1):
// there, only the dropping of the longest-waiting connection keeps a slot free for the operator.
// Pure bookkeeping (unit-tested without sockets): the server closes the connection it is told to.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dibs::http {

class control_slots {
 public:
  using clock = std::chrono::steady_clock;
  using id = std::uint64_t;
  enum class state { idle, reading, answering };

  control_slots(std::size_t total, std::size_t per_peer) : total_(total), per_peer_(per_peer) {}

  struct verdict {
    bool admit = false;        // false: no slot can be freed (every holder is answering)
    std::optional<id> evict;   // the connection to close first, when admitting needs its slot
  };
  // Whether a new connection from `peer` gets a slot, and whose it takes.
  verdict admit(const std::string& peer) const;

  // A connection let in (state idle: waiting for its first request) from `peer`.
  id add(const std::string& peer, clock::time_point now);
  // The connection's state changed at `now` (the time its wait or its reading started).
  void set(id which, state s, clock::time_point now);
  void remove(id which);

  std::size_t size() const { return slots_.size(); }
  std::size_t of_peer(const std::string& peer) const;

 private:
  struct slot {
    std::string peer;
    state st = state::idle;
    clock::time_point since;
  };
  // Of the connections of `peer` (all peers when empty), the one to drop first, if any may be.
  std::optional<id> victim(const std::string* peer) const;

  std::size_t total_, per_peer_;
  std::map<id, slot> slots_;
  id next_ = 1;
};

}  // namespace dibs::http
