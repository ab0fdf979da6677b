// An engine's controls over HTTP, for the CLI's metrics_port and for servers that embed dibs:
//   GET  /         the dashboard: a page that shows the run live and drives these controls
//                  (dashboard_page.hpp)
//   GET  /status   the counters as JSON (with the store's counts when it can give them)
//   GET  /history  the last 10 minutes, one sample a second, for the dashboard's charts
//   GET  /metrics  Prometheus text exposition
//   GET  /workers  the workers whose leases the store holds, live or stale, and what each holds
//   POST /pause    stop claiming; calls in flight finish      -> {"paused":true}
//   POST /resume   claim again                                -> {"paused":false}
//   POST /concurrency  {"concurrency":n}: a new ceiling on the calls at once
//   POST /rate     {"rate":"45/min"} or {"rate":null}: a new rate limit for the run
//   POST /release  {"worker":"NAME"}: ends a worker's leases (needs control_options::admin)
//   POST /retry    {"reason":"text"}, {"reason_is":"text"} or {}: failed items back to pending
//                  (needs control_options::admin)
// (control_server_impl.hpp's `routes` is the one list the server dispatches on; docs/operations.md
// has each route's parameters and answers.)
// Every request must name the server in its Host header, and every POST must carry a credential:
// a program's, the key (`Authorization: Bearer KEY`, control_options::key), or the dashboard's
// token (X-Dibs-Token, with the server's own Origin): what neither a web page of another site nor
// a program without the key can send (control_access.hpp says why). Sessions are bounded: so
// many connections at once (the longest-waiting one gives way to a new one: control_slots.hpp),
// so many bytes a request (control_framing.hpp), so long to send one, so long idle between
// requests. The store's counts are fetched at most once per `stats_max_age` however often the
// pages are scraped.
// It runs on the io_context it is given (one thread); the engine may run on that one or on its
// own shards.
#pragma once

#include <dibs/admin_store.hpp>
#include <dibs/engine.hpp>
#include <dibs/net.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

// Why `key` can't be the controls' key ("" when it can): at least 16 characters, printable ASCII
// without spaces (it travels in a header). control_server does not check control_options::key
// itself: check a key that comes from outside (a flag, a variable) before handing it over.
std::string control_key_problem(std::string_view key);

struct control_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free one (port() says which)
  // Host names accepted besides localhost, 127.0.0.1, [::1] and `address` (with any port): the
  // name a reverse proxy forwards in Host, for example.
  std::vector<std::string> allowed_hosts;
  // POST /pause, /resume from another host refused (listening on a non-loopback address opens
  // the read-only pages to the network, not the controls).
  bool posts_from_loopback_only = true;
  // The key a program's POST carries (`Authorization: Bearer KEY`; control_key_problem() says
  // what a key must be); empty: none, and only the dashboard's buttons change the run.
  std::string key;
  std::size_t max_connections = 16;          // then a new one takes the slot of one that waits
  std::size_t max_connections_per_peer = 8;  // one IP address's; its next takes the place of its own
  std::chrono::milliseconds request_timeout{10'000};  // to send one whole request (and read the answer)
  std::chrono::milliseconds idle_timeout{30'000};     // a kept-alive connection waiting for the next one
  std::chrono::milliseconds stats_max_age{1'000};     // the store's counts, reused this long
  // The store the controls administer (the engine's, as an admin_store); nullptr: none. It must
  // outlive the server.
  admin_store* admin = nullptr;
};

class control_server {
 public:
  control_server(net::io_context& ioc, engine& e, control_options options);
  control_server(net::io_context& ioc, engine& e, std::string address = "127.0.0.1", std::uint16_t port = 0);
  ~control_server();
  control_server(const control_server&) = delete;
  control_server& operator=(const control_server&) = delete;

  // Binds and starts accepting; throws (naming the address) when it can't bind.
  void start();
  // Stops accepting and closes open connections. Call on the io_context's thread (or post it).
  void stop();
  std::uint16_t port() const;
  // The dashboard's token (per server, random): a POST from a browser carries it in X-Dibs-Token.
  const std::string& token() const;

  // Its insides, defined in control_server_impl.hpp (not installed): named here so that the two
  // files that make the server can name its parts.
  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

}  // namespace dibs::http
