// The ip-api stand-in's server: routes, fault knobs, rate limit, TLS (ipapi_stub.hpp).
#include <dibs/ipapi/ipapi_stub.hpp>

#include "engine/src/close_on_exec.hpp"
#include <dibs/net.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <openssl/ssl.h>

#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace dibs::stub {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

namespace {
std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned v = 0;
      auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      if (ec == std::errc{} && p == s.data() + i + 3) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::uint64_t to_number(std::string_view s, std::uint64_t fallback) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && p == s.data() + s.size() ? v : fallback;
}
}  // namespace

struct ipapi_stub::impl {
  explicit impl(stub_options o, ipapi_stub& owner) : opts(std::move(o)), self(owner), acceptor(ioc), rng(opts.seed) {
    if (!opts.tls_cert_file.empty()) {
      auto& ctx = tls.emplace(ssl::context::tls_server);
      ctx.use_certificate_chain_file(opts.tls_cert_file);
      ctx.use_private_key_file(opts.tls_key_file, ssl::context::pem);
    }
  }

  struct reply {
    enum class kind { answer, hang, close, reset } k = kind::answer;
    unsigned status = 200;
    std::string body;
    std::chrono::milliseconds delay{0};
    std::vector<std::pair<std::string, std::string>> headers;
  };

  // ip-api's fixed windows: returns false (and fills the 429) past the limit.
  bool admit(reply& r) {
    if (!opts.rate_limit && !opts.record) return true;
    std::lock_guard lock(limit_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (!opts.rate_limit) {
      served.push_back(now);
      return true;
    }
    if (window_start == std::chrono::steady_clock::time_point{} || now >= window_start + opts.rate_window) {
      window_start = now;
      window_count = 0;
    }
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(window_start + opts.rate_window - now);
    const auto ttl = std::to_string((left_ms.count() + 999) / 1000);
    if (window_count >= opts.rate_limit) {
      r.status = 429;
      r.body = "{\"status\":\"fail\",\"message\":\"rate limited\"}";
      r.headers = {{"X-Rl", "0"}, {"X-Ttl", ttl}};
      ++self.rate_limited_;
      return false;
    }
    ++window_count;
    r.headers = {{"X-Rl", std::to_string(opts.rate_limit - window_count)}, {"X-Ttl", ttl}};
    if (opts.record) served.push_back(now);
    return true;
  }

  // The fault knobs: true when this answer is replaced by a fault.
  bool fault(reply& r) {
    double u = 0;
    {
      std::lock_guard lock(rng_mutex);
      u = std::uniform_real_distribution<double>(0, 1)(rng);
    }
    auto& f = self_faults;
    if ((u -= opts.timeout_rate) < 0) {
      r.k = reply::kind::hang;
      ++f.timeouts;
    } else if ((u -= opts.reset_rate) < 0) {
      r.k = reply::kind::reset;
      ++f.resets;
    } else if ((u -= opts.error_rate) < 0) {
      r.status = 500;
      r.body = "{\"status\":\"fail\",\"message\":\"internal error (injected)\"}";
      ++f.errors;
    } else if ((u -= opts.garbage_rate) < 0) {
      r.body = "{\"status\":\"success\",\"country\":\"Ger";
      ++f.garbage;
    } else if ((u -= opts.big_rate) < 0) {
      r.body = "{\"status\":\"success\",\"pad\":\"" + std::string(opts.big_bytes, 'x') + "\"}";
      ++f.big;
    } else {
      if ((u -= opts.slow_rate) < 0) {  // a right answer, late
        r.delay = opts.slow_latency;
        ++f.slow;
      }
      return false;
    }
    return true;
  }

  reply route(bhttp::verb method, std::string_view target, std::string_view body) {
    reply r;
    r.delay = opts.latency;
    if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
    if (starts_with(target, "/json/")) {
      if (admit(r) && !fault(r)) {
        const auto query = percent_decode(target.substr(6));
        if (poison_for(query, opts.poison_rate, opts.poison_seed) != poison::none) ++self_faults.poisoned;
        r.body = answer_with_poison(query, opts.poison_rate, opts.poison_seed);
      }
    } else if (target == "/batch") {
      ++self.batch_requests_;
      if (method != bhttp::verb::post) {
        r.status = 405;
        r.body = "{\"status\":\"fail\",\"message\":\"POST a JSON array\"}";
      } else if (admit(r) && !fault(r)) {
        auto b = batch_answer_for(body, opts.poison_rate, opts.poison_seed);
        r.status = b.status;
        r.body = std::move(b.body);
      }
    } else if (starts_with(target, "/test/status/")) {
      r.status = static_cast<unsigned>(to_number(target.substr(13), 500));
      if (r.status < 100 || r.status > 999) r.status = 500;
      r.body = "{\"status\":\"fail\",\"message\":\"test status " + std::to_string(r.status) + "\"}";
    } else if (target == "/test/garbage") {
      r.body = "{\"status\":\"success\",\"country\":";
    } else if (target == "/test/array") {
      r.body = "[1,2,3]";
    } else if (starts_with(target, "/test/big/")) {
      const auto n = std::min<std::uint64_t>(to_number(target.substr(10), 1024), 64u << 20);
      r.body = "{\"status\":\"success\",\"pad\":\"" + std::string(n, 'x') + "\"}";
    } else if (target == "/test/hang") {
      r.k = reply::kind::hang;
    } else if (target == "/test/close") {
      r.k = reply::kind::close;
    } else if (starts_with(target, "/test/slow/")) {
      auto rest = target.substr(11);
      const auto slash = rest.find('/');
      r.delay = std::chrono::milliseconds{to_number(rest.substr(0, slash), 0)};
      r.body = answer_for(slash == std::string_view::npos ? "" : percent_decode(rest.substr(slash + 1)));
    } else {
      r.status = 404;
      r.body = "{\"status\":\"fail\",\"message\":\"not found\"}";
    }
    return r;
  }

  awaitable<void> session(tcp::socket socket) {
    ++self.connections_;
    // Open from here until the session's socket is closed (the guard outlives the stream).
    struct open_guard {
      ipapi_stub& s;
      explicit open_guard(ipapi_stub& stub) : s(stub) {
        const auto now = ++s.open_connections_;
        auto peak = s.peak_connections_.load();
        while (now > peak && !s.peak_connections_.compare_exchange_weak(peak, now)) {
        }
      }
      ~open_guard() { --s.open_connections_; }
    } open{self};
    if (!tls) {
      beast::tcp_stream stream(std::move(socket));
      co_await serve(stream);
      boost::system::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      co_return;
    }
    beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
    auto [hec] = co_await stream.async_handshake(ssl::stream_base::server, net::as_tuple(net::use_awaitable));
    if (hec) co_return;  // e.g. the client refused our certificate
    if (const char* sni = SSL_get_servername(stream.native_handle(), TLSEXT_NAMETYPE_host_name)) {
      std::lock_guard lock(limit_mutex);
      server_name = sni;
    }
    co_await serve(stream);
    boost::system::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  template <class Stream>
  awaitable<void> serve(Stream& stream) {
    beast::flat_buffer buffer;
    for (bool first = true;; first = false) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(1 << 20);
      // An idle kept-alive connection ends after 120 s, or after `idle_close` (Node's
      // keepAliveTimeout): a client may send its next request just as the server hangs up.
      const bool idle_close = !first && opts.idle_close.count() > 0;
      beast::get_lowest_layer(stream).expires_after(idle_close ? std::chrono::milliseconds(opts.idle_close)
                                                               : std::chrono::milliseconds(120'000));
      auto [ec, n] = co_await bhttp::async_read(stream, buffer, parser, net::as_tuple(net::use_awaitable));
      if (ec) {
        if (idle_close && ec == beast::error::timeout && buffer.size() == 0) ++self_faults.idle_closes;
        break;
      }
      ++self.requests_;
      auto req = parser.release();
      auto r = route(req.method(), req.target(), req.body());
      if (r.k == reply::kind::close) break;
      if (r.k == reply::kind::hang) r.delay = std::chrono::hours(24);
      if (r.delay.count() > 0) {
        beast::get_lowest_layer(stream).expires_never();
        net::steady_timer t(co_await net::this_coro::executor, r.delay);
        auto [tec] = co_await t.async_wait(net::as_tuple(net::use_awaitable));
        if (tec) break;
      }
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
      if (r.k == reply::kind::reset) {  // promise 400 bytes, send a few, hang up
        static constexpr std::string_view partial =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"status\":\"succ";
        co_await net::async_write(stream, net::buffer(partial), net::as_tuple(net::use_awaitable));
        break;
      }
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), req.version()};
      res.set(bhttp::field::server, "dibs-stub");
      res.set(bhttp::field::content_type, "application/json; charset=utf-8");
      for (const auto& [k, v] : r.headers) res.set(k, v);
      res.keep_alive(req.keep_alive());
      res.body() = std::move(r.body);
      res.prepare_payload();
      auto [wec, w] = co_await bhttp::async_write(stream, res, net::as_tuple(net::use_awaitable));
      if (wec || !res.keep_alive()) break;
    }
  }

  awaitable<void> accept_loop() {
    for (;;) {
      // Each connection on its own strand: with several threads running `ioc`, a stream's timeout
      // handler (the idle close) could otherwise close the socket on one thread while the session
      // resumes on another (the chaos rounds crashed in exactly that race).
      net::any_io_executor strand = net::make_strand(ioc);
      auto [ec, socket] = co_await acceptor.async_accept(strand, net::as_tuple(net::use_awaitable));
      if (ec) {
        if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
        continue;  // e.g. too many open files: keep serving the connections we have
      }
      boost::system::error_code ignored;
      close_on_exec(socket.native_handle());  // the workers a test starts must not hold it open
      socket.set_option(tcp::no_delay(true), ignored);
      auto session_executor = socket.get_executor();
      net::co_spawn(session_executor, session(std::move(socket)), net::detached);
    }
  }

  stub_options opts;
  ipapi_stub& self;
  net::io_context ioc;
  tcp::acceptor acceptor;
  std::optional<ssl::context> tls;
  std::mutex rng_mutex;
  std::mt19937_64 rng;
  struct {
    std::atomic<std::uint64_t> errors{0}, timeouts{0}, garbage{0}, big{0}, resets{0}, slow{0}, poisoned{0}, idle_closes{0};
  } self_faults;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  std::mutex mutex;
  std::condition_variable stopped_cv;
  std::mutex limit_mutex;
  std::chrono::steady_clock::time_point window_start{};
  std::size_t window_count = 0;
  std::vector<std::chrono::steady_clock::time_point> served;
  std::string server_name;  // the last TLS client's SNI
  bool stopped = false;
};

ipapi_stub::ipapi_stub(stub_options opts) : impl_(std::make_unique<impl>(std::move(opts), *this)) {}

ipapi_stub::~ipapi_stub() { stop(); }

void ipapi_stub::start() {
  auto& i = *impl_;
  const tcp::endpoint ep(net::ip::make_address(i.opts.address), i.opts.port);
  boost::system::error_code ec;
  open_close_on_exec(i.acceptor, ep.protocol(), ec);
  if (ec) throw boost::system::system_error(ec, "stub: open");
  i.acceptor.set_option(tcp::acceptor::reuse_address(true));
  i.acceptor.bind(ep);
  i.acceptor.listen(net::socket_base::max_listen_connections);
  i.port = i.acceptor.local_endpoint().port();
  net::co_spawn(i.ioc, i.accept_loop(), net::detached);
  const auto n = std::max<std::size_t>(1, i.opts.threads);
  for (std::size_t t = 0; t < n; ++t) i.threads.emplace_back([&i] { i.ioc.run(); });
}

void ipapi_stub::stop() {
  auto& i = *impl_;
  {
    std::lock_guard lock(i.mutex);
    if (i.stopped) return;
    i.stopped = true;
  }
  i.ioc.stop();
  for (auto& t : i.threads)
    if (t.joinable()) t.join();
  i.threads.clear();
  boost::system::error_code ignored;
  i.acceptor.close(ignored);
  i.stopped_cv.notify_all();
}

void ipapi_stub::wait() {
  std::unique_lock lock(impl_->mutex);
  impl_->stopped_cv.wait(lock, [this] { return impl_->stopped; });
}

std::uint16_t ipapi_stub::port() const { return impl_->port; }

std::vector<std::chrono::steady_clock::time_point> ipapi_stub::served_times() const {
  std::lock_guard lock(impl_->limit_mutex);
  return impl_->served;
}

std::vector<std::uint64_t> ipapi_stub::served_per_second() const {
  const auto times = served_times();
  std::vector<std::uint64_t> counts;
  if (times.empty()) return counts;
  for (const auto& t : times) {
    const auto second = static_cast<std::size_t>(std::chrono::duration_cast<std::chrono::seconds>(t - times.front()).count());
    if (counts.size() <= second) counts.resize(second + 1, 0);
    ++counts[second];
  }
  return counts;
}

std::string ipapi_stub::last_server_name() const {
  std::lock_guard lock(impl_->limit_mutex);
  return impl_->server_name;
}

fault_counts ipapi_stub::faults() const {
  const auto& f = impl_->self_faults;
  return {f.errors.load(), f.timeouts.load(), f.garbage.load(), f.big.load(), f.resets.load(), f.slow.load(),
          f.poisoned.load(), f.idle_closes.load()};
}

std::string ipapi_stub::base_url() const {
  return (impl_->tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(impl_->port);
}

}  // namespace dibs::stub
