// The client's way to a server: a host name looked up (once at a time, again when due), a
// connect per address with quick retries when a full backlog drops the SYN, and TLS with the
// certificate and host name verified. Part of client::impl (client_impl.hpp).
#include "client_impl.hpp"

#include <dibs/http/http_figures.hpp>
#include "exchange_io.hpp"
#include "tcp_signals.hpp"
#include "tls_context.hpp"

#include "engine/src/close_on_exec.hpp"
#include <dibs/log.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>

namespace dibs::http {

namespace {
// "host:port" for the Host header: an IPv6 address in brackets, the default port left out.
std::string host_header(const origin& to) {
  const std::string host = to.host.find(':') != std::string::npos ? "[" + to.host + "]" : to.host;
  const bool default_port = to.port == (to.tls ? 443 : 80);
  return default_port ? host : host + ":" + std::to_string(to.port);
}

bool is_ip_address(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}
}  // namespace

ssl::context* client::impl::tls_context(response& res) {
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

awaitable<bool> client::impl::handshake(connection& c, const std::string& host, response& res) {
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

awaitable<host_pool*> client::impl::pool_for(const origin& to, response& res) {
  // A processor calls one origin: remember the last one, so a request builds no key string.
  if (!last_pool || to.port != last_origin.port || to.tls != last_origin.tls || to.host != last_origin.host) {
    auto [it, fresh] = pools.try_emplace(pool_key(to));
    if (fresh) {
      auto& p = it->second;
      p.key = it->first;
      p.slots = connection_slots(opts.max_connections_per_host);
      p.fixed_headers =
          "Host: " + host_header(to) + "\r\nUser-Agent: " + opts.user_agent + "\r\nAccept: application/json\r\n";
      if (opts.adaptive) {
        p.limit = opts.figures ? opts.figures->limits.get(p.key, *opts.adaptive)
                               : std::make_shared<origin_limit>(p.key, *opts.adaptive);
        sync_permits(p);  // sizes the permits and the unproven slots (unlimited until then)
      }
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

awaitable<std::unique_ptr<connection>> client::impl::open(const origin& to, host_pool& pool, steady::time_point deadline,
                                            response& res, std::function<void()> accepted) {
  auto c = std::make_unique<connection>(ex, to.tls ? &*tls_ctx : nullptr);
  // A drop is news only of connects begun after the last cut: a quick retry keeps the slot of
  // the window its first try took, and counted from its own start, each generation of retries
  // against a full backlog cut the limit and the window again.
  const auto began = steady::now();
  const auto budget_end = std::min(deadline, steady::now() + opts.connect_timeout);
  // Each address in turn, on a socket opened close-on-exec (Asio's range connect would open
  // its own, inheritable ones). The list is held here: a lookup meanwhile replaces the pool's.
  const endpoint_list endpoints = pool.endpoints;
  boost::system::error_code cec = net::error::host_not_found;
  auto connected_from = began;  // the try that succeeded began
  for (const auto& ep : *endpoints) {
    // A server whose backlog is full drops the SYN, and the kernel sends it again only after a
    // second: a connect that takes far longer than this origin's usual is tried again at once
    // (a few times, each bound twice the last), and tells the limit the server is overloaded.
    auto bound = connect_check_after(pool.connect_avg);
    for (int quick_tries = 0;; ++quick_tries) {
      open_close_on_exec(c->tcp().socket(), ep.protocol(), cec);
      if (cec) break;
      const auto started = steady::now();
      const bool last = quick_tries >= max_quick_connects;
      c->tcp().expires_at(last ? budget_end : std::min(budget_end, started + bound));
      auto [e] = co_await c->tcp().async_connect(ep, net::as_tuple(net::use_awaitable));
      cec = e;
      if (!cec) {
        connected_from = started;
        const auto took = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - started);
        pool.connect_avg = pool.connect_avg.count() == 0 ? took : (pool.connect_avg * 3 + took) / 4;
        break;
      }
      if (cec != boost::beast::error::timeout || last || steady::now() >= budget_end) break;
      log::debug("API ", pool.key, ": no answer to a connect in ", std::chrono::duration_cast<std::chrono::milliseconds>(bound).count(),
                 " ms (the server's backlog is full?); connecting again");
      handshake_dropped(pool, began);
      bound *= 2;
    }
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
  c->tcp().expires_at(budget_end);  // the TLS handshake, if any, within the connect's time
  ++stats.connects;
  boost::system::error_code ignored;
  c->tcp().socket().set_option(tcp::no_delay(true), ignored);
  if (c->tls) {
    const acknowledgement_watch watch(*c, budget_end, std::move(accepted));
    const bool shaken = co_await handshake(*c, to.host, res);
    if (!shaken) co_return nullptr;
  }
  c->open_took = steady::now() - connected_from;
  co_return c;
}

}  // namespace dibs::http
