// The HTTP client against bytes no well-behaved server sends (tests/servers/hostile_api.py): an
// endless chunk extension or trailer costs that one request and a bounded buffer, never the
// process's memory; interim answers (103, 100) are read past; an answer followed by another (at
// once, or later while the connection is idle) never lands on the next request's item.
#include "http_servers/small_api.hpp"
#include "http_servers/server_env.hpp"

#include <dibs/http/client.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {

// The process's peak resident memory (VmHWM) in KiB; reset_peak() starts a new peak.
long peak_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Runs `st` against the hostile API with one pipeline, so one connection: an answer left unread
// would be read by the next item. Three attempts an item; returns how many completed.
std::uint64_t run_on_one_connection(const test::python_api& api, std::shared_ptr<memory_store> st,
                                    std::size_t claim_batch) {
  engine_config cfg;
  cfg.shards = 1;
  cfg.concurrency = 1;
  cfg.claim_batch = claim_batch;
  cfg.max_attempts = 3;
  http::processor_options call;
  call.url = http::url_template::parse("http://127.0.0.1:" + std::to_string(api.port()) + "/json/{originatingIp}");
  call.adaptive.reset();
  engine e(cfg, std::move(st), http::make_http_processor_factory(call));
  test::run_bounded(e, 60s);
  return e.summary().completed;
}

}  // namespace

TEST_CASE("an endless chunk extension or trailer fails that request, with the process's memory bounded", "[small][hostile]") {
  test::python_api api("hostile_api.py", {}, "hostile_api.port");
  net::io_context ioc(1);
  http::client_options o;
  o.request_timeout = 3s;  // before the bound, the buffer grew until this timeout: gigabytes
  http::client c(ioc.get_executor(), o);
  const http::origin to{"127.0.0.1", static_cast<std::uint16_t>(api.port()), false};
  for (const std::string key : {"chunkext-1.2.3.4", "trailer-1.2.3.4"}) {
    INFO(key);
    reset_peak();
    const long before = peak_kib();
    const auto r = test::get_on(ioc, c, to, "/json/" + key);
    CHECK(r.ec);  // the request fails ...
    CHECK(r.ec != boost::beast::error::timeout);  // ... at once, not at the timeout
    const long grown = peak_kib() - before;
    INFO("peak grew by " << grown << " KiB");
    CHECK(grown < 16 * 1024);  // the bound: 16 MiB (the read buffer is 80 KiB)
    // ... and the next request, on a new connection, is answered.
    const auto ok = test::get_on(ioc, c, to, "/json/8.8.8.8");
    CHECK(ok.status == 200);
  }
}

TEST_CASE("an answer for another key closes the connection: the next item is not answered with the one before",
          "[small][hostile]") {
  test::python_api api("hostile_api.py", {}, "hostile_api.port");
  auto st = std::make_shared<memory_store>();
  // On one connection: "owed-0" answered well; "a-0" answered with a stray answer, its own
  // following 200 ms later. Had the connection been kept, "b-0" would read a-0's answer.
  for (const std::string key : {"owed-0", "a-0", "b-0"}) st->add(key);
  CHECK(run_on_one_connection(api, st, 3) == 3);
  for (const auto& it : st->snapshot()) {
    INFO(it.source.value);
    REQUIRE(it.target_json.has_value());
    CHECK_THAT(*it.target_json, Catch::Contains("\"query\":\"" + it.source.value + "\""));
    // The stray answer costs the item it reached one attempt, and no other item any.
    CHECK(it.attempts == (it.source.value == "a-0" ? 2 : 1));
  }
}

TEST_CASE("interim answers and extra answers never put one item's answer on another", "[small][hostile]") {
  test::python_api api("hostile_api.py", {}, "hostile_api.port");
  auto st = std::make_shared<memory_store>();
  // Keys of every kind, mixed: each kind's own behaviour on one connection, then the next key.
  for (int i = 0; i < 10; ++i)
    for (const std::string kind : {"hints-", "extra-", "late-", "plain-"}) st->add(kind + std::to_string(i));
  CHECK(run_on_one_connection(api, st, 4) == 40);
  for (const auto& it : st->snapshot()) {
    INFO(it.source.value);
    REQUIRE(it.target_json.has_value());
    CHECK_THAT(*it.target_json, Catch::Contains("\"query\":\"" + it.source.value + "\""));
  }
}

namespace {
// How many requests for `key` the hostile API read, and whether it closed a closing- key's connection.
std::pair<int, bool> seen_by(net::io_context& ioc, const test::python_api& api, const std::string& key) {
  http::client c(ioc.get_executor(), {});
  const http::origin to{"127.0.0.1", static_cast<std::uint16_t>(api.port()), false};
  const auto r = test::get_on(ioc, c, to, "/seen/" + key);
  REQUIRE(r.status == 200);
  const bool closed = r.body.find("\"closed\": true") != std::string::npos;
  const auto at = r.body.find("\"seen\": ");
  REQUIRE(at != std::string::npos);
  return {std::stoi(r.body.substr(at + 8)), closed};
}
}  // namespace

TEST_CASE("a request the server read and dropped unanswered is not sent again: only one it never received is",
          "[small][hostile]") {
  test::python_api api("hostile_api.py", {}, "hostile_api.port");
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), {});
  const http::origin to{"127.0.0.1", static_cast<std::uint16_t>(api.port()), false};
  SECTION("read, then the connection closed without an answer: one request at the server, the call failed") {
    REQUIRE(test::get_on(ioc, c, to, "/json/plain-1").status == 200);  // a connection kept alive ...
    const auto r = test::get_on(ioc, c, to, "/json/vanish-1");         // ... and reused
    CHECK(r.ec);
    // Before: taken for a stale kept-alive connection and sent again, so the server (and its
    // bill) saw it twice.
    CHECK(seen_by(ioc, api, "vanish-1").first == 1);
  }
  SECTION("a kept-alive connection the server had closed: the request goes again on a new one, and is answered") {
    REQUIRE(test::get_on(ioc, c, to, "/json/closing-1").status == 200);
    REQUIRE(test::eventually([&] { return seen_by(ioc, api, "closing-1").second; }));
    const auto r = test::get_on(ioc, c, to, "/json/plain-2");
    CHECK(r.status == 200);
    CHECK(seen_by(ioc, api, "plain-2").first == 1);
  }
}
