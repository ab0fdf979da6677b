#include "control_server.hpp"

#include <dibs/close_on_exec.hpp>
#include <dibs/metrics_text.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <list>
#include <stdexcept>

namespace dibs::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

struct control_server::impl : std::enable_shared_from_this<impl> {
  impl(net::io_context& i, engine& e, std::string a, std::uint16_t p)
      : ioc(i), eng(e), address(std::move(a)), port(p), acceptor(i) {}

  struct answer {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
  };

  awaitable<std::optional<store_stats>> store_counts() {
    try {
      co_return co_await eng.the_store().stats();
    } catch (const std::exception&) {
      co_return std::nullopt;  // a dead store must not take the status page with it
    }
  }

  awaitable<answer> route(bhttp::verb method, std::string_view target) {
    answer a;
    if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
    const bool get = method == bhttp::verb::get, post = method == bhttp::verb::post;
    if (target == "/status" && get) {
      a.body = status_json(eng, co_await store_counts());
    } else if (target == "/metrics" && get) {
      a.content_type = "text/plain; version=0.0.4; charset=utf-8";
      a.body = prometheus_text(eng, co_await store_counts());
    } else if ((target == "/pause" || target == "/resume") && post) {
      if (target == "/pause")
        eng.pause();
      else
        eng.resume();
      a.body = std::string("{\"paused\":") + (eng.paused() ? "true" : "false") + "}";
    } else if (target == "/status" || target == "/metrics" || target == "/pause" || target == "/resume") {
      a.status = 405;
      a.body = "{\"error\":\"method not allowed\"}";
    } else {
      a.status = 404;
      a.body = "{\"error\":\"not found: GET /status, GET /metrics, POST /pause, POST /resume\"}";
    }
    co_return a;
  }

  awaitable<void> session(std::list<beast::tcp_stream>::iterator it) {
    auto self = shared_from_this();  // the server may be stopped while a session runs
    auto& stream = *it;
    beast::flat_buffer buffer;
    for (;;) {
      bhttp::request<bhttp::string_body> req;
      stream.expires_after(std::chrono::seconds(60));
      auto [ec, n] = co_await bhttp::async_read(stream, buffer, req, net::as_tuple(net::use_awaitable));
      if (ec) break;
      auto a = co_await route(req.method(), req.target());
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(a.status), req.version()};
      res.set(bhttp::field::server, "dibs");
      res.set(bhttp::field::content_type, a.content_type);
      res.keep_alive(req.keep_alive());
      res.body() = std::move(a.body);
      res.prepare_payload();
      auto [wec, w] = co_await bhttp::async_write(stream, res, net::as_tuple(net::use_awaitable));
      if (wec || !res.keep_alive()) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    sessions.erase(it);
  }

  awaitable<void> accept_loop() {
    auto self = shared_from_this();
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
      if (ec) {
        if (!acceptor.is_open()) co_return;
        continue;
      }
      close_on_exec(socket.native_handle());  // like every socket dibs opens
      sessions.emplace_front(std::move(socket));
      net::co_spawn(ioc, session(sessions.begin()), net::detached);
    }
  }

  net::io_context& ioc;
  engine& eng;
  std::string address;
  std::uint16_t port;
  tcp::acceptor acceptor;
  std::list<beast::tcp_stream> sessions;
};

control_server::control_server(net::io_context& ioc, engine& e, std::string address, std::uint16_t port)
    : impl_(std::make_shared<impl>(ioc, e, std::move(address), port)) {}

control_server::~control_server() = default;

void control_server::start() {
  auto& i = *impl_;
  boost::system::error_code ec;
  const auto addr = net::ip::make_address(i.address, ec);
  if (ec) throw std::invalid_argument("metrics address '" + i.address + "': " + ec.message());
  const tcp::endpoint ep(addr, i.port);
  open_close_on_exec(i.acceptor, ep.protocol(), ec);
  if (ec) throw std::runtime_error("cannot open a socket for " + i.address + ": " + ec.message());
  i.acceptor.set_option(tcp::acceptor::reuse_address(true));
  i.acceptor.bind(ep, ec);
  if (ec) throw std::runtime_error("cannot listen on " + i.address + ":" + std::to_string(i.port) + ": " + ec.message());
  i.acceptor.listen();
  i.port = i.acceptor.local_endpoint().port();
  net::co_spawn(i.ioc, i.accept_loop(), net::detached);
}

void control_server::stop() {
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
  for (auto& s : impl_->sessions) s.socket().close(ignored);
}

std::uint16_t control_server::port() const { return impl_->port; }

}  // namespace dibs::http
