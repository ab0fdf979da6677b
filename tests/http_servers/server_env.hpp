// What the HTTP server fixtures (tests/servers/quirky_api_ctl.sh, nginx_ctl.sh) left in the
// build's test-servers directory, and small helpers for the tests that use them.
#pragma once

#include <dibs/http/client.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <thread>

namespace dibs::test {

// The port a fixture wrote to DIBS_SERVERS_DIR/`name`; the test fails when there is none.
inline std::uint16_t fixture_port(const std::string& name) {
  std::ifstream in(std::string(DIBS_SERVERS_DIR) + "/" + name);
  unsigned port = 0;
  in >> port;
  if (port == 0 || port > 65535) FAIL("no port in " << DIBS_SERVERS_DIR << "/" << name << ": is the fixture running?");
  return static_cast<std::uint16_t>(port);
}

// A prefix that makes this run's keys its own (the servers keep state per key across tests).
inline std::string run_prefix() {
  std::random_device rd;
  return "r" + std::to_string(rd()) + "-";
}

// One request on `c`, run to its end on `ioc`.
inline http::response get_on(net::io_context& ioc, http::client& c, const http::origin& to, const std::string& target) {
  auto fut = net::co_spawn(ioc, c.get(to, target), net::use_future);
  ioc.restart();
  ioc.run();
  return fut.get();
}

// Runs `e` until it ends, or stops it after `bound` (a test must fail, not hang, when items would
// wait far longer than they should).
inline void run_bounded(engine& e, std::chrono::seconds bound) {
  e.start();
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!e.finished() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a condition, with a bound
  if (!e.finished()) e.stop_now();
  e.wait();
}

}  // namespace dibs::test
