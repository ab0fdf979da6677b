// What a hostile peer can send the engine's controls (control_framing.hpp), against the controls
// of the real dibs program (`dibs demo --metrics-port 0`, a process of its own whose memory is
// read from /proc): a chunk-extension bomb, a trailer bomb and an endless header leave its peak
// memory within a fixed bound and fail only their own request; a request with Transfer-Encoding,
// a doubled Host or an oversized body is refused; everyone else is answered all along.
#include "support/dibs_controls.hpp"
#include "support/raw_http.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <string>

using namespace dibs;
using dibs::test::raw_http;

namespace {

struct sent_result {
  std::size_t sent = 0;  // bytes the server took before it closed (or all of them)
  bool closed = false;   // the server closed the connection before we were done sending
  std::string answer;    // what it answered, if anything reached us (a reset may drop it)
};

// Sends `head`, then filler bytes up to `filler` more, unless the server closes the connection
// first; then reads whatever it answers until it closes (each wait at most 20 s).
sent_result send_raw(std::uint16_t port, const std::string& head, std::size_t filler = 0) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s(ioc);
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  timeval tv{20, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sent_result r;
  const std::string unit(64 * 1024, 'x');
  std::string_view next = head;
  while (r.sent < head.size() + filler) {
    const auto n = ::send(s.native_handle(), next.data(), next.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      r.closed = true;
      break;
    }
    r.sent += static_cast<std::size_t>(n);
    next.remove_prefix(static_cast<std::size_t>(n));
    if (next.empty()) next = unit;
  }
  char buf[4096];
  for (;;) {
    const auto n = ::recv(s.native_handle(), buf, sizeof buf, 0);
    if (n <= 0) break;
    r.answer.append(buf, static_cast<std::size_t>(n));
  }
  return r;
}

using test::loopback_host;

using test::controls_paused;

}  // namespace

TEST_CASE("control server: a chunk-extension bomb, a trailer bomb and an endless header keep its memory bounded",
          "[controls][security][limits]") {
  dibs::test::dibs_controls d;
  const auto port = d.port();
  REQUIRE(raw_http(port, "GET", "/status").status == 200);  // warmed up: what a request costs is in the peak

  // Each bomb sends up to 64 MiB. The bound: the peak resident memory of the dibs process grows
  // by less than 16 MiB over the three. A read buffer without a maximum keeps every byte (and
  // grows by doubling), so it would pass 64 MiB with the first bomb.
  constexpr std::size_t bomb_bytes = 64u << 20;
  constexpr std::size_t bound_kib = 16 * 1024;
  const std::string chunked = "POST /pause HTTP/1.1\r\nHost: " + loopback_host(port) +
                              "\r\nX-Dibs-Control: 1\r\nTransfer-Encoding: chunked\r\n\r\n";
  const auto before = d.peak_rss_kib();
  REQUIRE(before > 0);

  // A chunk-size line whose extension never ends; a last chunk and a trailer that never ends; a
  // header that never ends. Each connection is closed long before 64 MiB.
  for (const auto& head : {chunked + "1;x=", chunked + "0\r\nX-Trailer: ",
                           "GET /status HTTP/1.1\r\nHost: " + loopback_host(port) + "\r\nX-Filler: "}) {
    const auto r = send_raw(port, head, bomb_bytes);
    INFO("bomb " << head.substr(head.size() - 12) << ": sent " << r.sent << " bytes; answer: " << r.answer);
    CHECK(r.closed);
    CHECK(r.sent < bomb_bytes);
    // Only the bomb's request failed: others are answered meanwhile.
    CHECK(raw_http(port, "GET", "/status").status == 200);
  }
  const auto after = d.peak_rss_kib();
  INFO("peak resident memory of dibs: " << before << " KiB before the bombs, " << after << " KiB after");
  CHECK(after - before < bound_kib);
  CHECK_FALSE(controls_paused(port));  // no bomb's POST /pause went through
}

TEST_CASE("control server: a body without a Content-Length, a Host given twice and a large body are refused",
          "[controls][security][limits]") {
  dibs::test::dibs_controls d;
  const auto port = d.port();
  // A well-formed chunked POST: refused (411) before its body is read.
  const auto chunked = send_raw(port, "POST /pause HTTP/1.1\r\nHost: " + loopback_host(port) +
                                          "\r\nX-Dibs-Control: 1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
  CHECK_THAT(chunked.answer, Catch::StartsWith("HTTP/1.1 411"));
  // Two Host headers: parsers and proxies disagree on which one counts, so neither does.
  auto r = raw_http(port, "GET", "/status", {{"Host", loopback_host(port)}, {"Host", "evil.example"}});
  CHECK(r.status == 400);
  CHECK_THAT(r.body, Catch::Contains("Host"));
  r = raw_http(port, "GET", "/status", {{"Host", "evil.example"}, {"Host", loopback_host(port)}});
  CHECK(r.status == 400);
  // A body over the bound (4 KiB): 413.
  r = raw_http(port, "POST", "/pause", {{"X-Dibs-Control", "1"}}, std::string(5000, ' '));
  CHECK(r.status == 413);
  CHECK_FALSE(controls_paused(port));
  CHECK(raw_http(port, "GET", "/status").status == 200);
}
