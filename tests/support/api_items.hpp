// A JSON Lines file of items for `dibs enrich --store jsonl:...`, and an API's own count read from
// its GET /stats (tests/servers/*.py), as the HTTP-server tests use them.
#pragma once

#include "support/run_dibs.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace dibs::test {

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// `n` items {"ip": "10.0.x.y", "who": "user-i"}.
inline void write_items(const std::filesystem::path& p, std::size_t n) {
  std::string text;
  for (std::size_t i = 0; i < n; ++i)
    text += "{\"ip\":\"10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256) + "\",\"who\":\"user-" +
            std::to_string(i) + "\"}\n";
  write_file(p, text);
}

// `dibs enrich` of DIR/in.jsonl into DIR/out.jsonl against `url`, with `more` flags, bounded: a
// run that never ends is killed after `bound` (exit status 137) and fails the test.
inline std::pair<int, std::string> enrich_lines(const std::filesystem::path& dir, const std::string& url,
                                                std::vector<std::string> more = {},
                                                std::chrono::seconds bound = std::chrono::seconds(240)) {
  std::vector<std::string> args{"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                (dir / "out.jsonl").string(), "--url", url, "--no-progress"};
  args.insert(args.end(), more.begin(), more.end());
  return run_dibs_within(bound, args);
}

// The API's own count `name` from GET /stats, read in HTTP/1.0 to the close (http.server answers
// so); -1 when it can't be read.
inline int stat_of(std::uint16_t port, const std::string& name) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s(ioc);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return -1;
  boost::asio::write(s, boost::asio::buffer(std::string("GET /stats HTTP/1.0\r\n\r\n")), ec);
  std::string in;
  boost::asio::read(s, boost::asio::dynamic_buffer(in), ec);  // to the end: the server closes
  const std::regex n("\"" + name + "\": (\\d+)");
  std::smatch m;
  return std::regex_search(in, m, n) ? std::stoi(m[1].str()) : -1;
}

}  // namespace dibs::test
