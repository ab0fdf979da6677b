// dibs through Debian's nginx as a reverse proxy in front of the stub (tests/servers/nginx_ctl.sh):
// kept-alive connections closed after 1 s idle or 50 requests, chunked answers, a limit of 16
// connections per client answered with 503.
#include "http_servers/server_env.hpp"

#include <dibs/http/batch_processor.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// The stub on the port nginx forwards to.
struct proxied_stub {
  proxied_stub() {
    stub::stub_options o;
    o.port = test::fixture_port("nginx_upstream.port");
    api = std::make_unique<stub::ipapi_stub>(o);
    api->start();
  }
  std::string proxy_base() const { return "http://127.0.0.1:" + std::to_string(test::fixture_port("nginx.port")); }
  std::unique_ptr<stub::ipapi_stub> api;
};

// nginx's count of open client connections (this request's own included).
int nginx_active_connections(net::io_context& ioc) {
  http::client probe(ioc.get_executor(), {});
  auto r = test::get_on(ioc, probe, {"127.0.0.1", test::fixture_port("nginx.port"), false}, "/nginx_status");
  REQUIRE(r.status == 200);
  const auto at = r.body.find("Active connections:");
  REQUIRE(at != std::string::npos);
  return std::stoi(r.body.substr(at + 19));
}

engine_config busy_config() {
  engine_config c;
  c.shards = 2;
  c.concurrency = 40;  // more connections than nginx allows one client: some calls meet a 503
  c.claim_batch = 25;
  c.max_attempts = 10;
  return c;
}
}  // namespace

TEST_CASE("nginx proxy: every item done with exactly the stub's answer", "[http][nginx]") {
  proxied_stub s;
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(400, 41);
  http::processor_options p;
  p.url = http::url_template::parse(s.proxy_base() + "/json/{originatingIp}");
  p.backoff_base = 10ms;
  p.backoff_max = 200ms;
  engine e(busy_config(), st, http::make_http_processor_factory(p));
  test::run_bounded(e, 120s);
  const auto sum = e.summary();
  CHECK(sum.completed == 400);
  CHECK(sum.failed == 0);
  for (const auto& it : st->snapshot()) {
    INFO("item " << it.id << ": " << it.last_error);
    REQUIRE(it.target_json.has_value());
    CHECK(*it.target_json == stub::answer_for(it.source.value));
  }
}

TEST_CASE("nginx proxy: batch mode, chunked answers of many items", "[http][nginx][batch]") {
  proxied_stub s;
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(300, 42);
  http::batch_processor_options b;
  b.call.url = http::url_template::parse(s.proxy_base() + "/batch");
  b.call.backoff_base = 10ms;
  b.call.backoff_max = 200ms;
  b.batch_size = 20;
  auto cfg = busy_config();
  engine e(cfg, st, http::make_batch_processor_factory(b));
  test::run_bounded(e, 120s);
  const auto sum = e.summary();
  CHECK(sum.completed == 300);
  CHECK(sum.failed == 0);
  for (const auto& it : st->snapshot()) {
    INFO("item " << it.id << ": " << it.last_error);
    REQUIRE(it.target_json.has_value());
    CHECK(*it.target_json == stub::answer_for(it.source.value));
  }
}

TEST_CASE("nginx proxy: connections nginx closed after its keepalive_timeout are not used again", "[http][nginx]") {
  proxied_stub s;
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), {});  // the default idle limit, 4 s: longer than nginx's 1 s
  const http::origin to{"127.0.0.1", test::fixture_port("nginx.port"), false};
  std::vector<std::future<http::response>> first;
  for (int i = 1; i <= 8; ++i) first.push_back(net::co_spawn(ioc, c.get(to, "/json/8.8.8." + std::to_string(i)), net::use_future));
  ioc.restart();
  ioc.run();
  for (auto& f : first) REQUIRE(f.get().status == 200);
  REQUIRE(c.idle_connections() == 8);
  // nginx closes all eight after 1 s idle; its count then holds only the probe's own connection.
  const auto bound = std::chrono::steady_clock::now() + 20s;
  while (nginx_active_connections(ioc) > 1 && std::chrono::steady_clock::now() < bound) std::this_thread::sleep_for(50ms);
  REQUIRE(nginx_active_connections(ioc) == 1);
  for (int i = 0; i < 3; ++i) {
    auto r = test::get_on(ioc, c, to, "/json/9.9.9." + std::to_string(i));
    INFO(r.describe());
    CHECK(r.status == 200);
    CHECK(r.body == stub::answer_for("9.9.9." + std::to_string(i)));
  }
}
