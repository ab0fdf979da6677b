#include "tcp_proxy.hpp"

#include "engine/src/close_on_exec.hpp"
#include <dibs/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <atomic>
#include <list>
#include <thread>

namespace dibs::test {

using tcp = net::ip::tcp;

struct tcp_proxy::impl {
  struct link {
    link(net::io_context& ioc) : client(ioc), server(ioc) {}
    tcp::socket client, server;
  };

  impl(std::string host, std::uint16_t port) : target(net::ip::make_address(host), port), acceptor(ioc) {
    boost::system::error_code ec;
    open_close_on_exec(acceptor, tcp::v4(), ec);  // the workers it serves must not inherit it
    if (ec) throw boost::system::system_error(ec, "proxy: open");
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind({net::ip::make_address("127.0.0.1"), 0});
    acceptor.listen();
    net::co_spawn(ioc, accept_loop(), net::detached);
    thread = std::thread([this] { ioc.run(); });
  }

  ~impl() {
    net::post(ioc, [this] {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      for (auto& l : links) {
        l->client.close(ignored);
        l->server.close(ignored);
      }
    });
    ioc.stop();
    thread.join();
  }

  // Waits while the proxy is stalled.
  awaitable<void> wait_stall() {
    while (std::chrono::steady_clock::now() < stalled_until.load()) {
      net::steady_timer t(co_await net::this_coro::executor, stalled_until.load());
      co_await t.async_wait(net::as_tuple(net::use_awaitable));
    }
  }

  awaitable<void> pump(std::shared_ptr<link> l, bool upstream) {
    auto& from = upstream ? l->client : l->server;
    auto& to = upstream ? l->server : l->client;
    std::array<char, 16384> buf;
    for (;;) {
      auto [rec, n] = co_await from.async_read_some(net::buffer(buf), net::as_tuple(net::use_awaitable));
      if (rec) break;
      co_await wait_stall();
      auto [wec, w] = co_await net::async_write(to, net::buffer(buf.data(), n), net::as_tuple(net::use_awaitable));
      if (wec) break;
    }
    boost::system::error_code ignored;
    from.close(ignored);
    to.close(ignored);
    links.remove(l);
  }

  awaitable<void> accept_loop() {
    for (;;) {
      auto l = std::make_shared<link>(ioc);
      auto [aec] = co_await acceptor.async_accept(l->client, net::as_tuple(net::use_awaitable));
      if (aec) {
        if (!acceptor.is_open()) co_return;
        continue;
      }
      if (refusals.load() > 0) {
        --refusals;
        boost::system::error_code ignored;
        l->client.close(ignored);
        continue;
      }
      // Both ends close-on-exec: a copy of the server's end held by a worker started later
      // would keep the database session (and its row locks) alive after the proxy closes it.
      close_on_exec(l->client.native_handle());
      boost::system::error_code oec;
      open_close_on_exec(l->server, target.protocol(), oec);
      if (oec) {
        boost::system::error_code ignored;
        l->client.close(ignored);
        continue;
      }
      auto [cec] = co_await l->server.async_connect(target, net::as_tuple(net::use_awaitable));
      if (cec) {
        boost::system::error_code ignored;
        l->client.close(ignored);
        continue;
      }
      links.push_back(l);
      net::co_spawn(ioc, pump(l, true), net::detached);
      net::co_spawn(ioc, pump(l, false), net::detached);
    }
  }

  net::io_context ioc{1};
  tcp::endpoint target;
  tcp::acceptor acceptor;
  std::list<std::shared_ptr<link>> links;
  std::atomic<std::chrono::steady_clock::time_point> stalled_until{};
  std::atomic<int> refusals{0};
  std::thread thread;
};

tcp_proxy::tcp_proxy(std::string target_host, std::uint16_t target_port)
    : impl_(std::make_unique<impl>(std::move(target_host), target_port)) {}

tcp_proxy::~tcp_proxy() = default;

std::uint16_t tcp_proxy::port() const { return impl_->acceptor.local_endpoint().port(); }

void tcp_proxy::stall(std::chrono::milliseconds d) { impl_->stalled_until = std::chrono::steady_clock::now() + d; }

void tcp_proxy::refuse(int n) { impl_->refusals += n; }

void tcp_proxy::calm() {
  impl_->refusals = 0;
  impl_->stalled_until = std::chrono::steady_clock::now();
}

void tcp_proxy::reset_all() {
  net::post(impl_->ioc, [i = impl_.get()] {
    for (auto& l : i->links) {
      boost::system::error_code ignored;
      l->client.set_option(net::socket_base::linger(true, 0), ignored);  // RST, not FIN
      l->client.close(ignored);
      l->server.close(ignored);
    }
  });
}

}  // namespace dibs::test
