// dibs against an API it did not write: Python's http.server (tests/servers/quirky_api.py),
// which pretty-prints, answers HTTP/1.0 bodies ended by the close, closes kept-alive connections
// after 0.5 s idle, and says 503 with a Retry-After.
#include "http_servers/server_env.hpp"

#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
std::string api_base() { return "http://127.0.0.1:" + std::to_string(test::fixture_port("quirky_api.port")); }

// The object quirky_api.py answers for `key`, compact, as dibs must store it.
std::string stored_answer(const std::string& key) {
  return R"({"status":"success","query":")" + key + R"(","source":"quirky api","note":"a \"b\"\nc"})";
}

struct quirky_run {
  quirky_run(const std::string& route, std::size_t items, std::size_t concurrency) : prefix(test::run_prefix()) {
    store = std::make_shared<memory_store>();
    for (std::size_t i = 0; i < items; ++i) keys.push_back(prefix + std::to_string(i));
    for (const auto& k : keys) store->add(k);
    popts.url = http::url_template::parse(api_base() + "/" + route + "/{originatingIp}");
    popts.backoff_base = 50ms;
    cfg.shards = 1;
    cfg.concurrency = concurrency;
    cfg.claim_batch = 50;
    cfg.max_attempts = 5;
  }
  run_summary run(std::chrono::seconds bound = 60s) {
    engine e(cfg, store, http::make_http_processor_factory(popts));
    test::run_bounded(e, bound);
    return e.summary();
  }
  void check_every_answer() {
    for (const auto& it : store->snapshot()) {
      INFO("item " << it.id << ": " << it.last_error);
      REQUIRE(it.target_json.has_value());
      CHECK(*it.target_json == stored_answer(it.source.value));
    }
  }
  std::string prefix;  // every key's: "r<random>-"
  std::shared_ptr<memory_store> store;
  std::vector<std::string> keys;
  http::processor_options popts;
  engine_config cfg;
};

// The most connections that were open at once to serve `q`'s keys, as the API counted them.
int peak_open(const quirky_run& q) {
  net::io_context ioc;
  http::client probe(ioc.get_executor(), {});
  const auto prefix = q.prefix.substr(0, q.prefix.size() - 1);  // without its '-'
  auto r = test::get_on(ioc, probe, {"127.0.0.1", test::fixture_port("quirky_api.port"), false}, "/peak-open/" + prefix);
  REQUIRE(r.status == 200);
  return std::stoi(r.body.substr(r.body.find(':') + 1));
}

// How many connections the API closed after their idle timeout, read on a client of its own.
int idle_closes(net::io_context& ioc) {
  http::client probe(ioc.get_executor(), {});
  auto r = test::get_on(ioc, probe, {"127.0.0.1", test::fixture_port("quirky_api.port"), false}, "/idle-closes");
  REQUIRE(r.status == 200);
  return std::stoi(r.body.substr(r.body.find(':') + 1));
}
}  // namespace

TEST_CASE("quirky API: a pretty-printed answer is stored compact, one line", "[http][quirky]") {
  quirky_run q("pretty", 20, 10);
  const auto sum = q.run();
  CHECK(sum.completed == 20);
  CHECK(sum.failed == 0);
  q.check_every_answer();
}

TEST_CASE("quirky API: HTTP/1.0 answers whose body ends when the server closes", "[http][quirky]") {
  quirky_run q("http10", 20, 5);
  const auto sum = q.run();
  CHECK(sum.completed == 20);
  CHECK(sum.failed == 0);
  q.check_every_answer();
}

TEST_CASE("quirky API: 503 with Retry-After from a server that closes idle connections, every item done",
          "[http][quirky]") {
  // 40 calls at once leave 40 kept-alive connections; the server closes them while the calls
  // wait out the Retry-After, and the retries must not meet one dead connection after another.
  quirky_run q("retry-once", 40, 40);
  q.popts.backoff_base = 500ms;  // the default: retries come after the server's 0.5 s idle close
  const auto sum = q.run(120s);
  CHECK(sum.completed == 40);
  CHECK(sum.failed == 0);
  q.check_every_answer();
}

TEST_CASE("quirky API: --max-connections with a server that closes connections: every slot comes back",
          "[http][quirky][max-connections]") {
  // HTTP/1.0 bodies end with the server's close, and 503s are waited out while the server closes
  // the idle connections: a slot kept by a closed connection would leave the run stuck with 30
  // pipelines waiting for 2 connections.
  for (const char* route : {"http10", "retry-once"}) {
    DYNAMIC_SECTION(route) {
      quirky_run q(route, 30, 30);
      q.popts.max_connections = 2;
      const auto sum = q.run(120s);
      CHECK(sum.completed == 30);
      CHECK(sum.failed == 0);
      q.check_every_answer();
      const auto peak = peak_open(q);  // as the server saw it: the limit held
      CHECK(peak >= 1);
      CHECK(peak <= 2);
    }
  }
}

TEST_CASE("quirky API: a Retry-After of 999999999 s is waited out only up to --max-retry-after", "[http][quirky]") {
  quirky_run q("huge-retry", 3, 3);
  q.popts.max_retry_after = 1s;
  const auto sum = q.run(40s);  // without the cap the items would wait 31 years
  CHECK(sum.completed == 3);
  CHECK(sum.failed == 0);
  q.check_every_answer();
}

TEST_CASE("quirky API: after a stale kept-alive connection the request goes on a new one", "[http][quirky]") {
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), {});
  const http::origin to{"127.0.0.1", test::fixture_port("quirky_api.port"), false};
  const auto prefix = test::run_prefix();
  const int closed_before = idle_closes(ioc);
  // Six connections at once, all kept alive.
  std::vector<std::future<http::response>> first;
  for (int i = 0; i < 6; ++i) first.push_back(net::co_spawn(ioc, c.get(to, "/json/" + prefix + std::to_string(i)), net::use_future));
  ioc.restart();
  ioc.run();
  for (auto& f : first) REQUIRE(f.get().status == 200);
  REQUIRE(c.idle_connections() == 6);
  // The server closes all six after 0.5 s idle (the client's own idle limit, 4 s, is not reached).
  const auto bound = std::chrono::steady_clock::now() + 20s;
  while (idle_closes(ioc) < closed_before + 6 && std::chrono::steady_clock::now() < bound)
    std::this_thread::sleep_for(50ms);
  REQUIRE(idle_closes(ioc) >= closed_before + 6);
  auto r = test::get_on(ioc, c, to, "/json/" + prefix + "after");
  INFO(r.describe());
  CHECK(r.status == 200);
  CHECK(r.body == stored_answer(prefix + "after"));
  // The six closed connections are seen closed before use and dropped: no request is written on
  // one (it once cost a write and a resend).
  CHECK(c.stats().closed_idle == 6);
  CHECK(c.stats().stale_retries == 0);
}

TEST_CASE("quirky API: a connection idle past --idle-timeout is closed, never used", "[http][quirky]") {
  net::io_context ioc(1);
  http::client_options o;
  o.idle_timeout = 100ms;  // below the server's 0.5 s
  http::client c(ioc.get_executor(), o);
  const http::origin to{"127.0.0.1", test::fixture_port("quirky_api.port"), false};
  const auto prefix = test::run_prefix();
  REQUIRE(test::get_on(ioc, c, to, "/json/" + prefix + "1").status == 200);
  REQUIRE(c.idle_connections() == 1);
  std::this_thread::sleep_for(300ms);  // past the client's idle limit (not a synchronisation: no one else acts)
  auto r = test::get_on(ioc, c, to, "/json/" + prefix + "2");
  CHECK(r.status == 200);
  CHECK_FALSE(r.reused);
  CHECK(c.stats().expired_idle == 1);
  CHECK(c.stats().stale_retries == 0);
  CHECK(c.stats().connects == 2);
}

TEST_CASE("quirky API: the Host header of an IPv6 address has brackets", "[http][quirky]") {
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), {});
  const auto port = test::fixture_port("quirky_api6.port");
  auto t = http::url_template::parse("http://[::1]:" + std::to_string(port) + "/host");
  auto r = test::get_on(ioc, c, t.origin(), t.expand(job{}).target);
  INFO(r.describe());
  REQUIRE(r.status == 200);
  CHECK(r.body == R"({"host": "[::1]:)" + std::to_string(port) + "\"}");
}
