// The control server's slots (control_slots.hpp), with real sockets against the controls of the
// real dibs program: idle kept-alive connections and half-sent requests that fill every slot
// don't lock out the operator's POST /pause or a Prometheus scrape, and one peer's connections
// don't push out another peer's.
#include "support/dibs_controls.hpp"
#include "support/eventually.hpp"
#include "support/raw_http.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <memory>
#include <vector>

using namespace dibs;
using test::raw_http;
namespace net = boost::asio;
namespace bhttp = boost::beast::http;

namespace {

const std::string slots_key = "slots-test-key-0123456789";
const std::vector<std::string> with_key{"DIBS_CONTROL_KEY=" + slots_key};
// The operator's POST: the key (and the header older versions asked for instead).
const test::header_list operator_headers{{"Authorization", "Bearer " + slots_key}, {"X-Dibs-Control", "1"}};

using test::controls_paused;

// One kept-alive connection to the controls, from `source` (any 127.x.y.z is this host's
// loopback, and a peer of its own to the server). Every wait is bounded by 10 s.
class keep_alive {
 public:
  keep_alive(std::uint16_t port, const std::string& source = "127.0.0.1") : port_(port), s_(ioc_) {
    s_.open(net::ip::tcp::v4());
    s_.bind({net::ip::make_address(source), 0});
    s_.connect({net::ip::make_address("127.0.0.1"), port});
    timeval tv{10, 0};
    ::setsockopt(s_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(s_.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  // The answer's status to `method target` on this connection, 0 when the server closed it.
  int request(const std::string& target, bhttp::verb method = bhttp::verb::get, const test::header_list& headers = {}) {
    bhttp::request<bhttp::string_body> req{method, target, 11};
    req.set(bhttp::field::host, "127.0.0.1:" + std::to_string(port_));
    for (const auto& [k, v] : headers) req.set(k, v);
    req.keep_alive(true);
    req.prepare_payload();
    boost::system::error_code ec;
    bhttp::write(s_, req, ec);
    if (ec) return 0;
    bhttp::response<bhttp::string_body> res;
    bhttp::read(s_, buffer_, res, ec);
    return ec ? 0 : static_cast<int>(res.result_int());
  }
  // Half a request: the server is left waiting for the rest.
  void start_request() { net::write(s_, net::buffer(std::string("GET /status HTTP/1.1\r\nHost: 127"))); }
  // Whether the server has closed this connection (a read finds the end, or a reset).
  bool closed_by_server() {
    char c;
    const auto n = ::recv(s_.native_handle(), &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  std::uint16_t port_;
  net::io_context ioc_;
  net::ip::tcp::socket s_;
  boost::beast::flat_buffer buffer_;
};

using connections = std::vector<std::unique_ptr<keep_alive>>;

// `n` connections from `source` that each had one request answered and now wait, kept alive:
// what sixteen scrapers (or an attacker) sending a request every 29 s hold.
connections idle_connections(std::uint16_t port, std::size_t n, const std::string& source = "127.0.0.1") {
  connections out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(std::make_unique<keep_alive>(port, source));
    out.back()->request("/status");
  }
  return out;
}

}  // namespace

TEST_CASE("control server: sixteen idle kept-alive connections don't lock out the operator's POST /pause or a scrape",
          "[controls][security][slots]") {
  test::dibs_controls d(with_key);  // 16 slots, 8 per peer (the defaults)
  const auto port = d.port();
  auto held = idle_connections(port, 16);
  // A scrape and the operator's pause, each on a new connection, are answered ...
  CHECK(raw_http(port, "GET", "/metrics").status == 200);
  CHECK(raw_http(port, "POST", "/pause", operator_headers).status == 200);
  CHECK(controls_paused(port));
  // ... because connections that were only waiting gave up their slots, the longest waiting first.
  CHECK(test::eventually([&] { return held.front()->closed_by_server(); }, std::chrono::seconds(10)));
  CHECK_FALSE(held.back()->closed_by_server());
  CHECK(held.back()->request("/status") == 200);
}

TEST_CASE("control server: sixteen half-sent requests don't lock out the operator either", "[controls][security][slots]") {
  test::dibs_controls d(with_key);
  const auto port = d.port();
  connections stalled;
  for (int i = 0; i < 16; ++i) {
    stalled.push_back(std::make_unique<keep_alive>(port));
    stalled.back()->start_request();
  }
  CHECK(raw_http(port, "POST", "/pause", operator_headers).status == 200);
  CHECK(raw_http(port, "GET", "/metrics").status == 200);
}

TEST_CASE("control server: one peer's many connections push out its own, not another peer's kept-alive scraper",
          "[controls][security][slots]") {
  test::dibs_controls d;
  const auto port = d.port();
  keep_alive scraper(port, "127.0.0.3");  // Prometheus, scraping on one kept-alive connection
  REQUIRE(scraper.request("/metrics") == 200);
  auto flood = idle_connections(port, 16, "127.0.0.2");  // twice its share
  // The scraper's connection, the one idle longest, is still open: its next scrape is answered.
  CHECK(scraper.request("/metrics") == 200);
  // A third peer gets in too.
  keep_alive other(port, "127.0.0.4");
  CHECK(other.request("/status") == 200);
}
