// The OTLP exporter against collectors that fail it (adapters/http/otlp/otlp_exporter.hpp): its
// queue is bounded and what does not fit is counted; a collector that refuses the connection or
// answers 503 fails the export, its spans counted, and is left alone for the backoff (nothing
// queued meanwhile, counted as dropped while down); a collector that never answers costs the run's
// end at most the shutdown wait (not its 60 s request timeout). The collectors are loopback
// sockets: a closed port, one that reads a request and answers 503, one that never answers.
#include "adapters/http/otlp/otlp_exporter.hpp"
#include "support/eventually.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <catch2/catch.hpp>

#include <thread>

namespace {
using tcp = boost::asio::ip::tcp;

std::vector<dibs::span_record> spans(std::size_t n) {
  std::vector<dibs::span_record> out(n);
  for (auto& s : out) {
    s.trace[15] = 1;
    s.span[7] = 1;
    s.name = "dibs.item";
  }
  return out;
}

dibs::http::otlp_settings settings_for(std::uint16_t port) {
  dibs::http::otlp_settings s;
  s.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/traces";
  s.max_queue = 4;
  s.max_batch = 4;
  s.timeout = std::chrono::milliseconds(60'000);
  s.shutdown_wait = std::chrono::milliseconds(300);
  return s;
}

std::uint16_t closed_port() {
  boost::asio::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();  // closed when `a` goes
}
}  // namespace

TEST_CASE("otlp exporter: a full queue drops and counts, a refused export is counted, then the collector is left alone",
          "[otlp][exporter]") {
  dibs::http::otlp_exporter e(settings_for(closed_port()), {});
  e.export_spans(spans(10));  // 4 fit the queue
  CHECK(e.figures().dropped_full == 6);
  REQUIRE(dibs::test::eventually([&] { return e.figures().exports_failed.load() == 1; }));
  CHECK(e.figures().dropped_failed == 4);
  CHECK_FALSE(e.accepting());  // down: its backoff (1 s) has not passed
  e.export_spans(spans(3));
  CHECK(e.figures().dropped_down == 3);
  e.dropped_now(2);
  CHECK(e.figures().dropped_down == 5);
  e.shutdown();
  CHECK(e.figures().exported == 0);
  CHECK_THAT(e.end_line(), Catch::StartsWith("traces: 0 span(s) exported to http://127.0.0.1:") &&
                               Catch::Contains("15 dropped (6 with the queue full, 4 not accepted by the collector or left "
                                               "at the end, 5 while it was down)"));
}

TEST_CASE("otlp exporter: a collector that answers 503 fails the export, one that never answers is not waited for",
          "[otlp][exporter]") {
  boost::asio::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const auto port = a.local_endpoint().port();
  const bool answer = GENERATE(true, false);
  std::thread collector([&] {
    tcp::socket s(ioc);
    a.accept(s);
    boost::asio::streambuf head;
    boost::asio::read_until(s, head, "\r\n\r\n");
    if (!answer) {  // never answers: holds the connection until the exporter gives up on it
      boost::system::error_code ec;
      char byte;
      s.read_some(boost::asio::buffer(&byte, 1), ec);
      return;
    }
    const std::string reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(reply));
  });
  dibs::http::otlp_exporter e(settings_for(port), {});
  e.export_spans(spans(4));  // a full batch: sent at once
  if (answer) REQUIRE(dibs::test::eventually([&] { return e.figures().exports_failed.load() == 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  e.shutdown();  // never answering: the export under way is cancelled after the shutdown wait
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
  CHECK(e.figures().exported == 0);
  CHECK(e.figures().dropped_failed == 4);
  collector.join();
}
