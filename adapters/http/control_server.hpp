// An engine's controls over HTTP, for the CLI's --metrics-port and for servers that embed dibs:
//   GET  /status   the counters as JSON (with the store's counts when it can give them)
//   GET  /metrics  Prometheus text exposition
//   POST /pause    stop claiming; calls in flight finish      -> {"paused":true}
//   POST /resume   claim again                                -> {"paused":false}
// It runs on the io_context it is given; the engine may run on that one or on its own shards.
#pragma once

#include <dibs/engine.hpp>
#include <dibs/net.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace dibs::http {

class control_server {
 public:
  control_server(net::io_context& ioc, engine& e, std::string address = "127.0.0.1", std::uint16_t port = 0);
  ~control_server();
  control_server(const control_server&) = delete;
  control_server& operator=(const control_server&) = delete;

  // Binds and starts accepting; throws (naming the address) when it can't bind.
  void start();
  // Stops accepting and closes open connections. Call on the io_context's thread (or post it).
  void stop();
  std::uint16_t port() const;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

}  // namespace dibs::http
