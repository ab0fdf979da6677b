// An HTTP/1.1 client for one shard: keep-alive connection pools per origin (an idle connection
// older than `idle_timeout` is closed, never used: servers close theirs after a few seconds),
// a host name's addresses looked up once per pool at a time and again after every address failed
// or every `resolve_every` (endpoint_refresh.hpp), a connect timeout, a total timeout per
// request, and a cap on the response body. HTTPS through OpenSSL: the server's certificate and
// host name are verified (the system's CAs, or `tls.ca_file`), SNI is sent for host names.
// Not thread-safe: one client per shard.
//
// Cancellation: a terminal cancellation of the awaiting coroutine aborts the connect, write or
// read in progress; the call returns with `operation_aborted` and the connection is closed.
#pragma once

#include <dibs/http/adaptive_limit.hpp>
#include <dibs/http/origin.hpp>

#include <dibs/net.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dibs::http {

struct http_figures;

struct tls_options {
  std::string ca_file;    // PEM file of trusted CAs; "" = the system's store
  bool insecure = false;  // no certificate or host-name verification (the caller warns)
};

struct client_options {
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds request_timeout{30'000};  // from the start of the call to the last byte
  std::size_t max_body = 1 << 20;                      // larger bodies fail with body_limit
  std::size_t max_idle_per_host = 4096;                // idle keep-alive connections kept
  // At most this many connections open to one origin (0: no limit but the callers' number); a
  // request beyond it waits, first come first served, for one to be free (connection_slots.hpp).
  // The wait is not part of request_timeout.
  std::size_t max_connections_per_host = 0;
  // An idle kept-alive connection is used again only within this time: below the 5 s after
  // which Node and Apache close theirs, so a request rarely meets a connection being closed.
  // 0: every connection is closed after its answer.
  std::chrono::milliseconds idle_timeout{4'000};
  std::chrono::milliseconds resolve_every{60'000};  // a host name is looked up again this often
  std::string user_agent = "dibs/0.1";
  tls_options tls;
  // The adaptive limit on requests in flight to each origin (adaptive_limit.hpp): a request
  // beyond it waits, first come first served, and the wait is not part of request_timeout.
  // nullopt: no limit but the callers' number (a fixed concurrency).
  std::optional<adaptive_settings> adaptive;
  // The run's HTTP figures (may be null): each origin's adaptive limit is kept there, one for
  // every shard's client, and dropped handshakes counted. Without them the limit is this client's.
  http_figures* figures = nullptr;
  // This client's place among the shards sharing those limits: it runs its share of each.
  std::size_t shard = 0;
  std::size_t shards = 1;
  // The most calls any one of those shards may run of an origin's limit for a reason of its own
  // (max_connections over the shards, rounded down: the same on every shard, so they agree on
  // which of them call); 0: none. The limit's ceiling over the shards bounds it too.
  std::size_t most_per_shard = 0;
  // Called on the client's executor when an origin's limit changed: whoever feeds the client
  // (the engine) may now run more items, or should run fewer.
  std::function<void()> on_limit_change;
};

// One request: GET without a body, or POST, PUT, PATCH with one.
struct request {
  enum class verb { get, post, put, patch } method = verb::get;
  std::string target;  // path and query
  std::string body;
  std::string content_type;  // with a body: "" sends application/json (no string to allocate per GET)
  // More header lines, each "Name: value\r\n" (the caller checked them: request_builder.hpp).
  // They may hold secrets: nothing logs a request's headers.
  std::string headers;
  // Called once, right before the request is first written: after any wait for a connection
  // (max_connections_per_host). May be empty. Returning false sends nothing: the response then
  // has ec operation_aborted and stage "not sent" (a budget with no call left for it).
  std::function<bool()> on_send;
  // Called each time the request is about to be written on a connection (after on_send; again
  // when it goes on another): whether that connection was kept alive (`reused`) or is new. A
  // server reads a request on a kept-alive connection at once, one on a new connection only once
  // it accepts that connection, which a busy server with a long listen queue does late. May be
  // empty.
  std::function<void(bool reused)> on_wire;
};

struct response {
  boost::system::error_code ec;  // set when no complete response arrived
  std::string stage;             // where `ec` happened: resolve, connect, tls handshake, write, read
  std::string detail;            // more about `ec`: why a certificate was refused
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool reused = false;  // sent on a kept-alive connection

  // The first header of that name (case-insensitive), or "".
  std::string header(const std::string& name) const;
  // "connect: Connection refused", "HTTP 503 Service Unavailable" and the like.
  std::string describe() const;
};

struct client_stats {
  std::uint64_t requests = 0;
  std::uint64_t connects = 0;   // new connections opened
  std::uint64_t reuses = 0;     // requests sent on a kept-alive connection
  std::uint64_t stale_retries = 0;  // kept-alive connections found closed and replaced
  std::uint64_t expired_idle = 0;   // idle connections closed unused after idle_timeout
  std::uint64_t closed_idle = 0;    // idle connections the server had closed, dropped unused
  std::uint64_t resolves = 0;       // host name lookups
  std::uint64_t connection_waits = 0;  // requests that waited for a connection (max_connections_per_host)
  std::uint64_t limit_waits = 0;       // requests that waited for the adaptive limit
  std::uint64_t connect_waits = 0;     // ... and to open a connection (connect_window.hpp: paced)
  std::uint64_t pace_waits = 0;        // ... and for the API's pace (it refused for its rate)
  // Requests whose new connection the server never accepted (no byte of the request
  // acknowledged in time: its backlog was full), sent again on another connection.
  std::uint64_t dropped_handshakes = 0;
  std::uint64_t interim_answers = 0;  // 1xx answers read past (100 Continue, 103 Early Hints)
  std::uint64_t unsolicited = 0;  // connections closed for bytes no request asked for
  // Requests whose answer was far later than the origin's usual ones: their permits went to the
  // next requests (the adaptive limit's; they ran beside it).
  std::uint64_t stragglers = 0;
  std::uint64_t out_of_step = 0;  // idle connections closed after an answer to another request (drop_idle)
};

class client {
 public:
  client(net::any_io_executor ex, client_options opts);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  // Any request is sent again once, on a new connection, when a kept-alive connection turns out
  // closed before the answer began: the requests dibs makes are lookups, safe to repeat. A
  // request on a new connection that the server never accepted (tcp_signals.hpp) goes again on
  // another, up to three times, without waiting for request_timeout.
  awaitable<response> send(origin to, request req);
  awaitable<response> get(origin to, std::string target);
  // Connects (and with TLS, shakes hands, verifying the certificate) without a request; the
  // connection is kept for later requests. `ec` is set when that fails.
  awaitable<response> probe(origin to);

  // Closes the idle connections to `to`: an answer just read from it was another request's
  // (the caller knows: it names another key), so the server may be one answer behind on the
  // connection it came from, and the next request there would read this one's answer.
  void drop_idle(const origin& to);

  const client_stats& stats() const;
  const client_options& options() const;
  std::size_t idle_connections() const;
  // The API refused a request of `to` (429/503, after `latency`) with a word of when to come
  // back, and the caller paused the origin `wait` for it: the adaptive limit hears it
  // (origin_limit::paused_by_api). Nothing without an adaptive limit.
  void api_paused(const origin& to, int status, std::chrono::milliseconds wait, std::chrono::microseconds latency);
  // The adaptive limit of `to` now (its initial value before the first request), plus the
  // stragglers running beside it (straggler_watch.hpp); 0 without one.
  std::size_t limit(const origin& to) const;
  // True when the API of `to` was found to serve fewer requests than were sent
  // (origin_limit::requests_scarce), or there is no adaptive limit (the user's fixed concurrency
  // holds the requests).
  bool requests_scarce(const origin& to) const;
  // True when the adaptive limit of `to` leaves this client's shard no call of its own (the limit
  // goes to as few shards as it gives four calls each: limit_share; processor::parked).
  bool parked(const origin& to) const;
  // This client's shard sends `to` nothing more (its dispatcher ended): the other shards share the
  // origin's limit among themselves from now on (origin_limit::shard_gone).
  void leave(const origin& to);
  // A new ceiling for every origin's adaptive limit (the engine's whole concurrency changed): the
  // origin's, the same for every shard's client.
  void set_ceiling(std::size_t ceiling);
  // The addresses the pool of `to` connects to now (empty before its first request).
  std::vector<boost::asio::ip::tcp::endpoint> endpoints(const origin& to) const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace dibs::http
