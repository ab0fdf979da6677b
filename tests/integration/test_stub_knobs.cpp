// The stub's chaos knobs: poison answers (deterministic per address, each kind the shape a store
// refuses) and idle kept-alive connections closed after --idle-close; and the chaos checker's
// expected outcome of each address (tests/chaos/expected_outcome.hpp).
#include "chaos/expected_outcome.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <simdjson.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>

using namespace dibs;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
std::string address(int i) { return "8." + std::to_string(i / 65536 % 256) + "." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256); }

int depth_of(simdjson::dom::element e) {
  int d = 0;
  if (e.is_object())
    for (auto [k, v] : e.get_object()) d = std::max(d, depth_of(v));
  return e.is_object() ? d + 1 : 0;
}

// One keep-alive GET on `s`; returns the response's head and body.
std::string get(tcp::socket& s, const std::string& path) {
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n";
  asio::write(s, asio::buffer(req));
  std::string in;
  char buf[4096];
  for (;;) {
    const auto n = s.read_some(asio::buffer(buf));
    in.append(buf, n);
    const auto head_end = in.find("\r\n\r\n");
    if (head_end == std::string::npos) continue;
    const auto cl = in.find("Content-Length: ");
    const auto len = std::stoul(in.substr(cl + 16));
    if (in.size() >= head_end + 4 + len) return in;
  }
}
}  // namespace

TEST_CASE("the stub's poison: a fixed share of public addresses, each kind the shape a store refuses", "[stub][chaos]") {
  std::map<stub::poison, int> kinds;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto a = address(i);
    const auto k = stub::poison_for(a, 0.1, 42);
    CHECK(k == stub::poison_for(a, 0.1, 42));  // deterministic
    ++kinds[k];
  }
  CHECK(kinds[stub::poison::none] > n * 0.85);
  CHECK(kinds[stub::poison::none] < n * 0.95);
  CHECK(kinds[stub::poison::deep_json] > 0);
  CHECK(kinds[stub::poison::long_fail] > 0);
  CHECK(kinds[stub::poison::nul_string] > 0);
  CHECK(stub::poison_for("10.0.0.1", 1.0, 42) == stub::poison::none);  // private ranges keep their own answer
  CHECK(stub::poison_for("8.8.8.8", 0.0, 42) == stub::poison::none);

  simdjson::dom::parser p;
  const auto deep = stub::poison_answer(stub::poison::deep_json, "8.8.8.8");
  CHECK(depth_of(p.parse(deep)) >= 33);  // MariaDB's JSON check refuses a depth of 32 or more
  const auto fail = stub::poison_answer(stub::poison::long_fail, "8.8.8.8");
  std::string_view message;
  REQUIRE_FALSE(p.parse(fail)["message"].get_string().get(message));
  CHECK(message.size() > 65535);  // longer than a TEXT column
  const auto nul = stub::poison_answer(stub::poison::nul_string, "8.8.8.8");
  std::string_view isp;
  REQUIRE_FALSE(p.parse(nul)["isp"].get_string().get(isp));
  CHECK(isp.find('\0') != std::string_view::npos);
}

TEST_CASE("the stub answers poisoned addresses with their poison, on /json and /batch", "[stub][chaos]") {
  auto o = stub::stub_options::loopback();
  o.poison_rate = 1.0;  // every public address
  o.poison_seed = 7;
  stub::ipapi_stub server(o);
  server.start();
  asio::io_context ioc;
  tcp::socket s(ioc);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()));
  const auto reply = get(s, "/json/8.8.8.8");
  const auto expected = stub::answer_with_poison("8.8.8.8", 1.0, 7);
  CHECK(expected != stub::answer_for("8.8.8.8"));
  CHECK(reply.substr(reply.find("\r\n\r\n") + 4) == expected);
  CHECK(server.faults().poisoned == 1);
  const auto batch = stub::batch_answer_for(R"(["8.8.8.8","10.0.0.1"])", 1.0, 7);
  CHECK(batch.body == "[" + expected + "," + stub::answer_for("10.0.0.1") + "]");
}

TEST_CASE("the stub's idle_close ends a kept-alive connection left idle, and counts it", "[stub][chaos]") {
  auto o = stub::stub_options::loopback();
  o.idle_close = std::chrono::milliseconds(100);
  stub::ipapi_stub server(o);
  server.start();
  asio::io_context ioc;
  tcp::socket s(ioc);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server.port()));
  CHECK(get(s, "/json/8.8.8.8").find("200 OK") != std::string::npos);
  // The next read ends with the server's close (EOF), well within a generous bound.
  s.non_blocking(false);
  ::timeval tv{30, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char c;
  boost::system::error_code ec;
  s.read_some(asio::buffer(&c, 1), ec);
  CHECK(ec == asio::error::eof);
  for (int i = 0; i < 3000 && server.faults().idle_closes == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(server.faults().idle_closes == 1);
}

TEST_CASE("the chaos checker's expected outcome of an address, per store", "[chaos]") {
  using chaos::store_kind;
  // A healthy public address: done with exactly the stub's answer, on both stores.
  const auto h = chaos::expected_for("8.8.8.8", store_kind::mariadb, 0, 0);
  CHECK(h.done);
  CHECK(h.answer == stub::answer_for("8.8.8.8"));
  // Private: failed with the API's "no data".
  const auto p = chaos::expected_for("10.0.0.1", store_kind::mongo, 1.0, 0);
  CHECK_FALSE(p.done);
  CHECK(chaos::reason_fits(p, "the API has no data: private range", store_kind::mongo));
  CHECK_FALSE(chaos::reason_fits(p, "gave up after 8 attempts: the API has no data: x", store_kind::mongo));
  // Find one address of each poison kind, then what each store makes of it.
  std::map<stub::poison, std::string> of;
  for (int i = 0; of.size() < 3 && i < 100000; ++i)
    if (auto k = stub::poison_for(address(i), 0.5, 3); k != stub::poison::none) of.emplace(k, address(i));
  REQUIRE(of.size() == 3);
  const auto deep_m = chaos::expected_for(of[stub::poison::deep_json], store_kind::mariadb, 0.5, 3);
  const auto deep_g = chaos::expected_for(of[stub::poison::deep_json], store_kind::mongo, 0.5, 3);
  CHECK_FALSE(deep_m.done);
  CHECK(deep_g.done);
  CHECK(chaos::reason_fits(deep_m, "the store refused the answer: CONSTRAINT `t.location` failed", store_kind::mariadb));
  CHECK_FALSE(chaos::reason_fits(deep_m, "gave up after 8 attempts: HTTP 500", store_kind::mariadb));
  const auto nul_m = chaos::expected_for(of[stub::poison::nul_string], store_kind::mariadb, 0.5, 3);
  const auto nul_g = chaos::expected_for(of[stub::poison::nul_string], store_kind::mongo, 0.5, 3);
  CHECK(nul_m.done);
  CHECK_FALSE(nul_g.done);
  CHECK(chaos::reason_fits(nul_g, "the store refused the answer: string value of 'isp' contains a NUL character", store_kind::mongo));
  const auto long_m = chaos::expected_for(of[stub::poison::long_fail], store_kind::mariadb, 0.5, 3);
  CHECK_FALSE(long_m.done);
  CHECK_FALSE(chaos::reason_fits(long_m, "the API has no data: " + std::string(70000, 'm'), store_kind::mariadb));
  CHECK(chaos::reason_fits(long_m, "the API has no data: mmmm... (shortened)", store_kind::mariadb));
  // PostgreSQL: jsonb holds 40 levels, refuses \u0000; TEXT holds the long message (the engine shortens it).
  CHECK(chaos::expected_for(of[stub::poison::deep_json], store_kind::postgres, 0.5, 3).done);
  const auto nul_p = chaos::expected_for(of[stub::poison::nul_string], store_kind::postgres, 0.5, 3);
  CHECK_FALSE(nul_p.done);
  CHECK(nul_p.store_refuses);
  CHECK(chaos::reason_fits(nul_p, "the store refused the answer: unsupported Unicode escape sequence (SQLSTATE 22P05)",
                           store_kind::postgres));
  CHECK_FALSE(chaos::reason_fits(nul_p, "gave up after 8 attempts: HTTP 500", store_kind::postgres));
  const auto long_p = chaos::expected_for(of[stub::poison::long_fail], store_kind::postgres, 0.5, 3);
  CHECK_FALSE(long_p.done);
  CHECK_FALSE(long_p.store_refuses);
  CHECK(chaos::reason_fits(long_p, "the API has no data: mmmm", store_kind::postgres));
}
