#include "client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/message.hpp>

#include <algorithm>
#include <strings.h>
#include <unordered_map>

namespace dibs::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;

std::string response::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (::strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return {};
}

std::string response::describe() const {
  if (ec) return stage + ": " + ec.message();
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  return "HTTP " + std::to_string(status) + (reason.empty() ? "" : " " + std::string(reason));
}

namespace {
struct connection {
  explicit connection(const net::any_io_executor& ex) : stream(ex) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

struct host_pool {
  std::vector<tcp::endpoint> endpoints;
  std::vector<std::unique_ptr<connection>> idle;  // LIFO: the warmest connection first
};

// A kept-alive connection that the server closed meanwhile fails like this before any byte of
// the answer arrives; the request was not processed, so a GET may be sent again.
bool stale_connection_error(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::eof;
}
}  // namespace

struct client::impl {
  impl(net::any_io_executor e, client_options o) : ex(std::move(e)), opts(std::move(o)), resolver(ex) {}

  awaitable<response> get(std::string host, std::uint16_t port, std::string target) {
    response res;
    ++stats.requests;
    const auto deadline = steady::now() + opts.request_timeout;
    auto& pool = pools[host + ":" + std::to_string(port)];

    if (pool.endpoints.empty()) {
      boost::system::error_code ec;
      const auto addr = net::ip::make_address(host, ec);
      if (!ec) {
        pool.endpoints.emplace_back(addr, port);
      } else {
        auto [rec, results] =
            co_await resolver.async_resolve(host, std::to_string(port), net::as_tuple(net::use_awaitable));
        if (rec) {
          res.ec = rec;
          res.stage = "resolve " + host;
          co_return res;
        }
        for (const auto& r : results) pool.endpoints.push_back(r.endpoint());
      }
    }

    bhttp::request<bhttp::empty_body> req{bhttp::verb::get, target, 11};
    req.set(bhttp::field::host, port == 80 ? host : host + ":" + std::to_string(port));
    req.set(bhttp::field::user_agent, opts.user_agent);
    req.set(bhttp::field::accept, "application/json");
    req.keep_alive(true);

    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<connection> c;
      res.reused = false;
      if (!pool.idle.empty()) {
        c = std::move(pool.idle.back());
        pool.idle.pop_back();
        res.reused = true;
        ++stats.reuses;
      } else {
        c = std::make_unique<connection>(ex);
        const auto left = deadline - steady::now();
        c->stream.expires_after(std::min<steady::duration>(opts.connect_timeout, left));
        auto [cec, ep] = co_await c->stream.async_connect(pool.endpoints, net::as_tuple(net::use_awaitable));
        if (cec) {
          res.ec = cec;
          res.stage = "connect";
          co_return res;
        }
        ++stats.connects;
        boost::system::error_code ignored;
        c->stream.socket().set_option(tcp::no_delay(true), ignored);
      }

      c->stream.expires_at(deadline);
      auto [wec, written] = co_await bhttp::async_write(c->stream, req, net::as_tuple(net::use_awaitable));
      if (wec) {
        if (res.reused && attempt == 0 && stale_connection_error(wec)) {
          --stats.reuses;
          ++stats.stale_retries;
          continue;
        }
        res.ec = wec;
        res.stage = "write";
        co_return res;
      }

      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(opts.max_body);
      parser.header_limit(64 * 1024);
      auto [rec, read] =
          co_await bhttp::async_read(c->stream, c->buffer, parser, net::as_tuple(net::use_awaitable));
      if (rec) {
        if (res.reused && attempt == 0 && !parser.got_some() && stale_connection_error(rec)) {
          --stats.reuses;
          ++stats.stale_retries;
          continue;
        }
        res.ec = rec;
        res.stage = "read";
        co_return res;
      }

      auto msg = parser.release();
      res.status = static_cast<int>(msg.result_int());
      for (const auto& f : msg) res.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
      res.body = std::move(msg.body());
      if (msg.keep_alive() && pool.idle.size() < opts.max_idle_per_host) {
        c->stream.expires_never();
        pool.idle.push_back(std::move(c));
      }
      co_return res;
    }
  }

  net::any_io_executor ex;
  client_options opts;
  tcp::resolver resolver;
  std::unordered_map<std::string, host_pool> pools;
  client_stats stats;
};

client::client(net::any_io_executor ex, client_options opts)
    : impl_(std::make_unique<impl>(std::move(ex), std::move(opts))) {}
client::~client() = default;

awaitable<response> client::get(std::string host, std::uint16_t port, std::string target) {
  return impl_->get(std::move(host), port, std::move(target));
}

const client_stats& client::stats() const { return impl_->stats; }
const client_options& client::options() const { return impl_->opts; }
std::size_t client::idle_connections() const {
  std::size_t n = 0;
  for (const auto& [k, p] : impl_->pools) n += p.idle.size();
  return n;
}

}  // namespace dibs::http
