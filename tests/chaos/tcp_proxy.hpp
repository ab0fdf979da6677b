// A loopback TCP proxy for the chaos driver: workers reach the database through it, and the
// driver makes it misbehave the way networks do. Runs its own thread; every method is
// thread-safe.
//   stall(d)     nothing is forwarded either way for `d` (connections stay open)
//   reset_all()  every open connection is cut at once (RST), as a crashed middlebox would
//   refuse(n)    the next `n` new connections are closed as soon as they are accepted
//   calm()       refusals still pending are dropped and a stall ends (the round's drain phase)
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace dibs::test {

class tcp_proxy {
 public:
  tcp_proxy(std::string target_host, std::uint16_t target_port);
  ~tcp_proxy();
  tcp_proxy(const tcp_proxy&) = delete;
  tcp_proxy& operator=(const tcp_proxy&) = delete;

  std::uint16_t port() const;
  void stall(std::chrono::milliseconds d);
  void reset_all();
  void refuse(int n);
  void calm();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace dibs::test
