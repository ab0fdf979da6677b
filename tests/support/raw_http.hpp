// One HTTP/1.1 exchange written by hand, for tests that must choose every header (Host, Origin,
// Content-Type...) as a browser or an attacker would: the request is sent with
// "Connection: close" and the answer read until the server closes.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dibs::test {

struct raw_answer {
  int status = 0;  // 0: no answer (the connection was closed or refused)
  std::string head, body;
};

using header_list = std::vector<std::pair<std::string, std::string>>;

// `headers` replace the default Host (127.0.0.1:port) when they name one.
inline raw_answer raw_http(std::uint16_t port, const std::string& method, const std::string& target,
                           const header_list& headers = {}, const std::string& body = "") {
  std::string text = method + " " + target + " HTTP/1.1\r\n";
  bool host = false;
  for (const auto& [k, v] : headers) {
    text += k + ": " + v + "\r\n";
    host = host || k == "Host";
  }
  if (!host) text += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  text += "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;

  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s(ioc);
  raw_answer a;
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return a;
  boost::asio::write(s, boost::asio::buffer(text), ec);
  if (ec) return a;
  std::string in;
  boost::asio::read(s, boost::asio::dynamic_buffer(in), ec);  // to the end: the server closes
  const auto end = in.find("\r\n\r\n");
  if (in.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return a;
  a.status = std::stoi(in.substr(9, 3));
  a.head = in.substr(0, end);
  a.body = in.substr(end + 4);
  return a;
}

// "127.0.0.1:port", as a browser on this host sends it in Host.
inline std::string loopback_host(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// Whether the controls on `port` say the run is paused (GET /status).
inline bool controls_paused(std::uint16_t port) {
  return raw_http(port, "GET", "/status").body.find("\"paused\":true") != std::string::npos;
}

// A loopback port nothing listens on (bound, then closed again).
inline std::uint16_t a_closed_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

}  // namespace dibs::test
