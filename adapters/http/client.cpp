#include "client.hpp"

#include "connection_slots.hpp"
#include "endpoint_refresh.hpp"
#include "response_reader.hpp"
#include "tls_context.hpp"

#include <dibs/async_event.hpp>
#include <dibs/close_on_exec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <optional>
#include <strings.h>
#include <tuple>
#include <unordered_map>

namespace dibs::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

std::string response::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (::strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return {};
}

std::string response::describe() const {
  if (ec) return stage + ": " + ec.message() + (detail.empty() ? "" : " (" + detail + ")");
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  return "HTTP " + std::to_string(status) + (reason.empty() ? "" : " " + std::string(reason));
}

namespace {
// A plain or a TLS connection; every read and write goes through exchange() below.
struct connection {
  connection(const net::any_io_executor& ex, ssl::context* tls_context) {
    if (tls_context)
      tls.emplace(ex, *tls_context);
    else
      plain.emplace(ex);
  }
  beast::tcp_stream& tcp() { return tls ? tls->next_layer() : *plain; }

  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  steady::time_point idle_since{};  // when it went back to the pool
  // The parser of the answer being read: kept here, not in the request's coroutine frame, so that
  // frame stays small (a frame over about 1 KiB costs glibc a large-bin allocation, and a
  // consolidation of its fast bins, on every request).
  std::optional<response_reader> reader;
};

using endpoint_list = std::shared_ptr<const std::vector<tcp::endpoint>>;

struct host_pool {
  // Replaced whole by each lookup, never changed: a connect loop keeps its copy alive.
  endpoint_list endpoints;
  endpoint_freshness freshness;
  bool resolving = false;     // one lookup at a time; the others wait for it on `resolved`
  std::uint64_t lookups = 0;  // finished lookups, so a waiter knows one ended
  response failed_lookup;     // why the last lookup failed (its ec is clear when it did not)
  std::unique_ptr<async_event> resolved = std::make_unique<async_event>();
  // Oldest first (each goes back with the time it went back): expired ones are cut from the
  // front, the warmest is taken from the back.
  std::vector<std::unique_ptr<connection>> idle;
  connection_slots slots;  // --max-connections
  // "Host: ...\r\nUser-Agent: ...\r\nAccept: application/json\r\n": the same for every request.
  std::string fixed_headers;
};

// "host:port" for the Host header: an IPv6 address in brackets, the default port left out.
std::string host_header(const origin& to) {
  const std::string host = to.host.find(':') != std::string::npos ? "[" + to.host + "]" : to.host;
  const bool default_port = to.port == (to.tls ? 443 : 80);
  return default_port ? host : host + ":" + std::to_string(to.port);
}

// A kept-alive connection that the server closed meanwhile fails like this before any byte of
// the answer arrives; the request was not processed, so a GET may be sent again.
bool stale_connection_error(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::eof || ec == ssl::error::stream_truncated;
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

struct client::impl {
  impl(net::any_io_executor e, client_options o) : ex(std::move(e)), opts(std::move(o)), resolver(ex) {}

  // The TLS context, made on the first HTTPS request (loading the system's CAs takes a while).
  ssl::context* tls_context(response& res) {
    if (tls_ctx) return &*tls_ctx;
    auto& ctx = tls_ctx.emplace(ssl::context::tls_client);
    boost::system::error_code ec;
    configure_client_tls(ctx, opts.tls, ec);
    if (ec) {
      tls_ctx.reset();
      res.ec = ec;
      res.stage = "tls setup";
      res.detail = opts.tls.ca_file.empty() ? "the system's CA store" : "CA file " + opts.tls.ca_file;
      return nullptr;
    }
    return &ctx;
  }

  // TLS on a connected socket: SNI, then the certificate chain and the host name (or address)
  // checked by OpenSSL itself, so a refusal says why ("hostname mismatch", "unable to get local
  // issuer certificate").
  awaitable<bool> handshake(connection& c, const std::string& host, response& res) {
    SSL* native = c.tls->native_handle();
    const bool ip = is_ip_address(host);
    if (!ip) SSL_set_tlsext_host_name(native, host.c_str());
    if (!opts.tls.insecure) {
      X509_VERIFY_PARAM* param = SSL_get0_param(native);
      if (ip)
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
      else
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    }
    auto [ec] = co_await c.tls->async_handshake(ssl::stream_base::client, net::as_tuple(net::use_awaitable));
    if (!ec) co_return true;
    res.ec = ec;
    res.stage = "tls handshake with " + host;
    if (const long v = SSL_get_verify_result(native); v != X509_V_OK) res.detail = X509_verify_cert_error_string(v);
    co_return false;
  }

  // The pool of `to`, its addresses looked up when due; nullptr (and `res` says why) when the
  // name does not resolve or TLS can't be set up.
  awaitable<host_pool*> pool_for(const origin& to, response& res) {
    // A processor calls one origin: remember the last one, so a request builds no key string.
    if (!last_pool || to.port != last_origin.port || to.tls != last_origin.tls || to.host != last_origin.host) {
      auto [it, fresh] = pools.try_emplace((to.tls ? "https://" : "http://") + to.host + ":" + std::to_string(to.port));
      if (fresh) {
        it->second.slots = connection_slots(opts.max_connections_per_host);
        it->second.fixed_headers =
            "Host: " + host_header(to) + "\r\nUser-Agent: " + opts.user_agent + "\r\nAccept: application/json\r\n";
      }
      last_pool = &it->second;
      last_origin = to;
    }
    auto& pool = *last_pool;  // map nodes stay put: the pointer outlives later insertions
    if (to.tls && !tls_context(res)) co_return nullptr;
    if (!pool.endpoints) {
      boost::system::error_code ec;
      const auto addr = net::ip::make_address(to.host, ec);
      if (!ec) {
        pool.endpoints = std::make_shared<const std::vector<tcp::endpoint>>(1, tcp::endpoint(addr, to.port));
        pool.freshness.literal = true;
      }
    }
    while (should_resolve(pool.freshness, steady::now(), opts.resolve_every)) {
      if (pool.resolving) {
        // A periodic lookup under way: the addresses found before still serve meanwhile.
        if (pool.endpoints && !pool.freshness.all_failed) break;
        // Another request is looking the name up: wait for its answer rather than ask again.
        const auto seen = pool.lookups;
        co_await pool.resolved->wait();
        if ((co_await net::this_coro::cancellation_state).cancelled() != net::cancellation_type::none) {
          res.ec = net::error::operation_aborted;
          res.stage = "resolve " + to.host;
          co_return nullptr;
        }
        if (pool.lookups != seen && pool.failed_lookup.ec && !pool.endpoints) {
          res.ec = pool.failed_lookup.ec;
          res.stage = pool.failed_lookup.stage;
          co_return nullptr;
        }
        if (pool.lookups != seen) break;  // a fresh answer (or the old one kept): use it
        continue;
      }
      pool.resolving = true;
      ++stats.resolves;
      auto [rec, results] = co_await resolver.async_resolve(to.host, std::to_string(to.port),
                                                            net::as_tuple(net::use_awaitable));
      pool.resolving = false;
      ++pool.lookups;
      pool.failed_lookup = response{};
      // Tried again at the next period, not by every request meanwhile: a failed lookup keeps the
      // addresses found before, if any (the name server may be down while the API is not).
      pool.freshness.resolved = true;
      pool.freshness.resolved_at = steady::now();
      pool.freshness.all_failed = false;
      if (rec || results.empty()) {
        pool.failed_lookup.ec = rec ? rec : net::error::host_not_found;
        pool.failed_lookup.stage = "resolve " + to.host;
        if (!pool.endpoints) pool.freshness.resolved = false;  // nothing to use: ask again next time
      } else {
        std::vector<tcp::endpoint> found;
        for (const auto& r : results) found.push_back(r.endpoint());
        pool.endpoints = std::make_shared<const std::vector<tcp::endpoint>>(unique_endpoints(std::move(found)));
      }
      pool.resolved->notify();
      if (!pool.endpoints) {
        res.ec = pool.failed_lookup.ec;
        res.stage = pool.failed_lookup.stage;
        co_return nullptr;
      }
      break;
    }
    co_return &pool;
  }

  // A new connection to `to` (TCP, then TLS when asked), or nullptr and `res` says why.
  awaitable<std::unique_ptr<connection>> open(const origin& to, host_pool& pool, steady::time_point deadline,
                                              response& res) {
    auto c = std::make_unique<connection>(ex, to.tls ? &*tls_ctx : nullptr);
    const auto left = deadline - steady::now();
    c->tcp().expires_after(std::min<steady::duration>(opts.connect_timeout, left));
    // Each address in turn, on a socket opened close-on-exec (Asio's range connect would open
    // its own, inheritable ones). The list is held here: a lookup meanwhile replaces the pool's.
    const endpoint_list endpoints = pool.endpoints;
    boost::system::error_code cec = net::error::host_not_found;
    for (const auto& ep : *endpoints) {
      open_close_on_exec(c->tcp().socket(), ep.protocol(), cec);
      if (cec) break;
      auto [e] = co_await c->tcp().async_connect(ep, net::as_tuple(net::use_awaitable));
      cec = e;
      if (!cec || cec == boost::beast::error::timeout) break;  // connected, or out of time for all
      boost::system::error_code ignored;
      c->tcp().socket().close(ignored);
    }
    if (cec) {
      // Every address failed (or the time for them ran out): the host may have moved.
      if (cec != net::error::operation_aborted && endpoints == pool.endpoints) pool.freshness.all_failed = true;
      res.ec = cec;
      res.stage = "connect";
      co_return nullptr;
    }
    ++stats.connects;
    boost::system::error_code ignored;
    c->tcp().socket().set_option(tcp::no_delay(true), ignored);
    if (c->tls && !co_await handshake(*c, to.host, res)) co_return nullptr;
    co_return c;
  }

  // The warmest idle connection that has not been idle for idle_timeout, or nullptr; older ones
  // are closed (the server is about to close them, or has).
  std::unique_ptr<connection> take_idle(host_pool& pool) {
    const auto now = steady::now();
    auto fresh = std::find_if(pool.idle.begin(), pool.idle.end(),
                              [&](const auto& c) { return now - c->idle_since < opts.idle_timeout; });
    stats.expired_idle += static_cast<std::uint64_t>(fresh - pool.idle.begin());
    pool.idle.erase(pool.idle.begin(), fresh);  // their destructors close the sockets
    if (pool.idle.empty()) return nullptr;
    auto c = std::move(pool.idle.back());
    pool.idle.pop_back();
    return c;
  }

  void keep_idle(host_pool& pool, std::unique_ptr<connection> c) {
    if (opts.idle_timeout.count() <= 0 || pool.idle.size() >= opts.max_idle_per_host) return;
    c->tcp().expires_never();
    c->idle_since = steady::now();
    pool.idle.push_back(std::move(c));
  }

  // The pool of `to` when it is the last one used and needs no lookup: no coroutine for the
  // common case of a processor calling its one origin.
  host_pool* ready_pool(const origin& to) {
    if (!last_pool || to.port != last_origin.port || to.tls != last_origin.tls || to.host != last_origin.host) return nullptr;
    if (to.tls && !tls_ctx) return nullptr;
    if (!last_pool->endpoints || should_resolve(last_pool->freshness, steady::now(), opts.resolve_every)) return nullptr;
    return last_pool;
  }

  // A slot of the pool's --max-connections (at once when one is free); false when the wait was
  // cancelled, and `res` says so.
  awaitable<bool> take_slot(host_pool& pool, connection_slots::held& slot, response& res) {
    ++stats.connection_waits;
    const bool got = co_await pool.slots.wait(slot);
    if (got) co_return true;
    res.ec = net::error::operation_aborted;
    res.stage = "wait for a connection";
    co_return false;
  }

  awaitable<response> probe(origin to) {
    response res;
    host_pool* pool = co_await pool_for(to, res);
    if (!pool) co_return res;
    connection_slots::held slot;
    if (!pool->slots.try_take(slot)) {  // no co_await inside a condition (g++ 12)
      const bool got = co_await take_slot(*pool, slot, res);
      if (!got) co_return res;
    }
    const auto deadline = steady::now() + opts.connect_timeout;
    auto c = co_await open(to, *pool, deadline, res);
    if (c) keep_idle(*pool, std::move(c));
    co_return res;
  }

  // The request as it goes on the wire: what Beast's serializer wrote for the same request
  // (Host, User-Agent, Accept; Content-Type and Content-Length for a POST), in one buffer.
  static std::string request_bytes(const host_pool& pool, request& spec) {
    const bool post = spec.method == request::verb::post;
    std::string wire;
    wire.reserve(32 + spec.target.size() + pool.fixed_headers.size() + (post ? 80 + spec.content_type.size() + spec.body.size() : 0));
    wire += post ? "POST " : "GET ";
    wire += spec.target;
    wire += " HTTP/1.1\r\n";
    wire += pool.fixed_headers;
    if (post) {
      wire += "Content-Type: ";
      wire += spec.content_type.empty() ? std::string_view("application/json") : std::string_view(spec.content_type);
      wire += "\r\nContent-Length: ";
      wire += std::to_string(spec.body.size());
      wire += "\r\n";
    }
    wire += "\r\n";
    if (post) wire += spec.body;
    return wire;
  }

  awaitable<response> send(origin to, request spec) {
    response res;
    ++stats.requests;
    host_pool* found = ready_pool(to);
    if (!found) found = co_await pool_for(to, res);
    if (!found) co_return res;
    auto& pool = *found;
    // Waiting for a connection (--max-connections) is not part of the request's time.
    connection_slots::held slot;
    if (!pool.slots.try_take(slot)) {  // no co_await inside a condition (g++ 12)
      const bool got = co_await take_slot(pool, slot, res);
      if (!got) co_return res;
    }
    const auto deadline = steady::now() + opts.request_timeout;
    const std::string wire = request_bytes(pool, spec);
    if (spec.on_send) spec.on_send();

    for (int attempt = 0;; ++attempt) {
      // After a stale connection, a new one: the other idle ones are as old, and likely as dead.
      std::unique_ptr<connection> c = attempt == 0 ? take_idle(pool) : nullptr;
      res.reused = c != nullptr;
      if (c) {
        ++stats.reuses;
      } else {
        c = co_await open(to, pool, deadline, res);
        if (!c) co_return res;
      }

      c->tcp().expires_at(deadline);
      bool nothing_received = true;
      const auto ec = co_await exchange(*c, wire, res, nothing_received);
      if (ec) {
        if (stale_retry(res, attempt, ec, nothing_received)) continue;
        res.ec = ec;
        res.stage = c->reader ? "read" : "write";  // the reader is set once the request is written
        co_return res;
      }
      const bool keep = c->reader->keep_alive();
      c->reader.reset();
      if (keep) keep_idle(pool, std::move(c));
      co_return res;  // the connection is back in the pool (or closed) before the slot goes back
    }
  }

  // Writes the request and reads its answer into `res` on `c` (its reader set while reading).
  // Its own coroutine: the request's frame stays under 1 KiB (a larger one costs glibc a
  // large-bin allocation, and a consolidation of its fast bins, on every request).
  awaitable<boost::system::error_code> exchange(connection& c, const std::string& wire, response& res,
                                                bool& nothing_received) {
    // Plain and TLS streams are different types: each branch awaits its own (no co_await in a
    // conditional expression, for g++ 12). One error code and size for every await.
    boost::system::error_code ec;
    std::size_t n = 0;
    c.reader.reset();
    if (c.tls)
      std::tie(ec, n) = co_await net::async_write(*c.tls, net::buffer(wire), net::as_tuple(net::use_awaitable));
    else
      std::tie(ec, n) = co_await net::async_write(*c.plain, net::buffer(wire), net::as_tuple(net::use_awaitable));
    if (ec) co_return ec;  // c.reader is unset: a write failed
    auto& parser = c.reader.emplace(res);
    parser.body_limit(opts.max_body);
    parser.header_limit(64 * 1024);
    if (c.tls)
      std::tie(ec, n) = co_await bhttp::async_read(*c.tls, c.buffer, parser, net::as_tuple(net::use_awaitable));
    else
      std::tie(ec, n) = co_await bhttp::async_read(*c.plain, c.buffer, parser, net::as_tuple(net::use_awaitable));
    if (ec) {
      // No complete answer: nothing of a partial one is reported.
      nothing_received = !parser.got_some();
      res.status = 0;
      res.headers.clear();
      res.body.clear();
    }
    co_return ec;
  }

  // A kept-alive connection the server closed before answering anything: the request goes
  // again, once, on a new connection (the next idle one is as likely dead).
  bool stale_retry(const response& res, int attempt, const boost::system::error_code& ec, bool nothing_received) {
    if (!res.reused || attempt != 0 || !nothing_received || !stale_connection_error(ec)) return false;
    --stats.reuses;
    ++stats.stale_retries;
    return true;
  }

  net::any_io_executor ex;
  client_options opts;
  tcp::resolver resolver;
  std::optional<ssl::context> tls_ctx;
  std::unordered_map<std::string, host_pool> pools;
  origin last_origin;
  host_pool* last_pool = nullptr;
  client_stats stats;
};

client::client(net::any_io_executor ex, client_options opts)
    : impl_(std::make_unique<impl>(std::move(ex), std::move(opts))) {}
client::~client() = default;

awaitable<response> client::send(origin to, request req) { return impl_->send(std::move(to), std::move(req)); }

awaitable<response> client::probe(origin to) { return impl_->probe(std::move(to)); }

awaitable<response> client::get(origin to, std::string target) {
  request req;
  req.target = std::move(target);
  return impl_->send(std::move(to), std::move(req));
}

const client_stats& client::stats() const { return impl_->stats; }
const client_options& client::options() const { return impl_->opts; }
std::vector<tcp::endpoint> client::endpoints(const origin& to) const {
  auto p = impl_->pools.find((to.tls ? "https://" : "http://") + to.host + ":" + std::to_string(to.port));
  if (p == impl_->pools.end() || !p->second.endpoints) return {};
  return *p->second.endpoints;
}

std::size_t client::idle_connections() const {
  std::size_t n = 0;
  for (const auto& [k, p] : impl_->pools) n += p.idle.size();
  return n;
}

}  // namespace dibs::http
