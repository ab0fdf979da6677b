// HTTPS against the stub serving TLS with a CA and certificate made for this run: verification
// succeeds with the right CA and host, and fails, saying why, for a wrong host or an unknown CA.
#include "support/test_pki.hpp"

#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
struct tls_fixture {
  tls_fixture() {
    stub = std::make_unique<stub::ipapi_stub>(stub::stub_options::loopback_tls(pki.server_cert, pki.server_key));
    stub->start();
  }

  // One GET with a client of these options, to `host` on the stub's port.
  http::response get(const http::client_options& o, const std::string& host, int times = 1) {
    net::io_context ioc(1);
    http::client c(ioc.get_executor(), o);
    http::response last;
    for (int i = 0; i < times; ++i) {
      http::origin to{host, stub->port(), true};
      auto fut = net::co_spawn(ioc, c.get(to, "/json/8.8.8.8"), net::use_future);
      ioc.restart();
      ioc.run();
      last = fut.get();
    }
    connects = c.stats().connects;
    return last;
  }

  test::test_pki pki = test::make_test_pki("localhost");
  std::unique_ptr<stub::ipapi_stub> stub;
  std::uint64_t connects = 0;
};
}  // namespace

TEST_CASE("HTTPS: a certificate from the given CA for the right host is accepted, with SNI", "[tls]") {
  tls_fixture f;
  http::client_options o;
  o.tls.ca_file = f.pki.ca_cert;
  auto r = f.get(o, "localhost", 3);
  INFO(r.describe());
  REQUIRE_FALSE(r.ec);
  CHECK(r.status == 200);
  CHECK(r.body.find("\"query\":\"8.8.8.8\"") != std::string::npos);
  CHECK(f.connects == 1);  // the TLS connection is kept alive and reused
  CHECK(f.stub->last_server_name() == "localhost");
}

TEST_CASE("HTTPS: a certificate for another host name is refused", "[tls]") {
  tls_fixture f;
  http::client_options o;
  o.tls.ca_file = f.pki.ca_cert;
  auto r = f.get(o, "127.0.0.1");  // the certificate names only localhost
  REQUIRE(r.ec);
  CHECK(r.status == 0);
  CHECK_THAT(r.describe(), Catch::StartsWith("tls handshake with 127.0.0.1: certificate verify failed"));
  CHECK_THAT(r.detail, Catch::Contains("mismatch"));
}

TEST_CASE("HTTPS: a certificate from an unknown CA is refused", "[tls]") {
  tls_fixture f;
  auto r = f.get(http::client_options{}, "localhost");  // the system's CAs only
  REQUIRE(r.ec);
  CHECK_THAT(r.describe(), Catch::StartsWith("tls handshake with localhost: certificate verify failed"));
  CHECK_THAT(r.detail, Catch::Contains("issuer certificate"));
}

TEST_CASE("HTTPS: --insecure accepts what verification refuses", "[tls]") {
  tls_fixture f;
  http::client_options o;
  o.tls.insecure = true;
  auto r = f.get(o, "127.0.0.1");
  INFO(r.describe());
  REQUIRE_FALSE(r.ec);
  CHECK(r.status == 200);
}

TEST_CASE("HTTPS: an unreadable CA file is reported as such", "[tls]") {
  tls_fixture f;
  http::client_options o;
  o.tls.ca_file = f.pki.dir + "/no-such-ca.pem";
  auto r = f.get(o, "localhost");
  REQUIRE(r.ec);
  CHECK_THAT(r.describe(), Catch::StartsWith("tls setup: "));
  CHECK_THAT(r.describe(), Catch::Contains("no-such-ca.pem"));
}

TEST_CASE("HTTPS end to end: the engine enriches every item through a verified connection", "[tls][e2e]") {
  tls_fixture f;
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(200, 31);
  http::processor_options p;
  p.url = http::url_template::parse(f.stub->base_url() + "/json/{originatingIp}");
  p.http.tls.ca_file = f.pki.ca_cert;
  engine_config cfg;
  cfg.shards = 2;
  cfg.concurrency = 40;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 200);
  CHECK(e.summary().failed == 0);
  for (const auto& it : st->snapshot()) CHECK(it.target_json == stub::answer_for(it.source.value));
}
