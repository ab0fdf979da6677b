// The engine's HTTP controls against what a web page in the user's browser can send (a
// cross-site "simple" POST, DNS rebinding), their session bounds, and the store's counts
// fetched at most about once a second however often /status and /metrics are scraped.
#include "support/controlled_engine.hpp"
#include "support/eventually.hpp"
#include "support/raw_http.hpp"

#include <catch2/catch.hpp>

#include <regex>

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

using namespace dibs;
using test::raw_http;

namespace {

using test::controlled_engine;

using test::loopback_host;

}  // namespace

TEST_CASE("the controls refuse a web page's cross-site POST and a rebound Host, and take a POST with the key",
          "[controls][security]") {
  http::control_options o;
  o.key = "control-test-key-0123456789";
  controlled_engine c(o);
  const auto port = c.port();
  const test::header_list with_key{{"Authorization", "Bearer " + o.key}};
  // What a page of evil.example can make a browser send without a preflight: a simple POST,
  // here through DNS rebinding (Host: evil.example) ...
  auto r = raw_http(port, "POST", "/pause",
                    {{"Host", "evil.example"}, {"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}}, "x");
  CHECK((r.status == 421 || r.status == 403));
  CHECK_FALSE(c.e->paused());
  // ... or straight to 127.0.0.1 (right Host, foreign Origin), even with the header copied.
  r = raw_http(port, "POST", "/pause", {{"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}}, "x");
  CHECK(r.status == 403);
  r = raw_http(port, "POST", "/pause", {{"Origin", "http://evil.example"}, {"X-Dibs-Control", "1"}});
  CHECK(r.status == 403);
  r = raw_http(port, "POST", "/pause", {{"Origin", "null"}, {"X-Dibs-Control", "1"}});
  CHECK(r.status == 403);
  // A POST without a credential (what an HTML form sends) is refused too.
  r = raw_http(port, "POST", "/pause", {{"Content-Type", "application/x-www-form-urlencoded"}}, "a=b");
  CHECK(r.status == 401);
  CHECK_FALSE(c.e->paused());
  // DNS rebinding: the page may read what it asks for, so every GET checks Host as well.
  CHECK(raw_http(port, "GET", "/status", {{"Host", "evil.example:" + std::to_string(port)}}).status == 421);
  CHECK(raw_http(port, "GET", "/metrics", {{"Host", "evil.example"}}).status == 421);
  CHECK(raw_http(port, "GET", "/status", {{"Host", "127.0.0.1:" + std::to_string(port + 1)}}).status == 421);
  CHECK(raw_http(port, "GET", "/status", {{"Host", ""}}).status == 421);

  // What curl, Prometheus and a script send.
  CHECK(raw_http(port, "GET", "/status").status == 200);
  CHECK(raw_http(port, "GET", "/status", {{"Host", "localhost:" + std::to_string(port)}}).status == 200);
  CHECK(raw_http(port, "GET", "/metrics", {{"Host", "[::1]:" + std::to_string(port)}}).status == 200);
  r = raw_http(port, "POST", "/pause", with_key);
  CHECK(r.status == 200);
  CHECK(r.body == "{\"paused\":true}");
  CHECK(c.e->paused());
  // A page the controls served themselves (same origin) may POST with the page's token; the
  // header alone is not enough from a browser (control_access.hpp).
  r = raw_http(port, "POST", "/resume", {{"Origin", "http://" + loopback_host(port)}, {"X-Dibs-Control", "1"}});
  CHECK(r.status == 403);
  CHECK(c.e->paused());
  r = raw_http(port, "POST", "/resume", {{"Origin", "http://" + loopback_host(port)}, {"X-Dibs-Token", c.controls->token()}});
  CHECK(r.status == 200);
  CHECK(r.body == "{\"paused\":false}");
  CHECK_FALSE(c.e->paused());
}

TEST_CASE("the dashboard: GET / shows the counts and carries the token its POSTs need, and /history fills", "[controls][dashboard]") {
  controlled_engine c;
  const auto port = c.port();
  // Wait (polled) until the run has done something, so the counts are not all zeros.
  for (int i = 0; i < 500 && c.e->figures().completed.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(c.e->figures().completed.load() > 0);
  auto page = raw_http(port, "GET", "/");
  REQUIRE(page.status == 200);
  CHECK_THAT(page.head, Catch::Contains("Content-Type: text/html; charset=utf-8"));
  CHECK_THAT(page.head, Catch::Contains("frame-ancestors 'none'"));
  CHECK_THAT(page.head, Catch::Contains("X-Frame-Options: DENY"));
  CHECK_THAT(page.body, Catch::Contains("data-token=\"" + c.controls->token() + "\""));
  CHECK_THAT(page.body, Catch::Contains("<dd id=\"done\">"));  // the store's counts, server-rendered
  CHECK(page.body.find("<dd id=\"completed\">0</dd>") == std::string::npos);
  // The page is read only by a page of the same Host, like every GET (DNS rebinding).
  CHECK(raw_http(port, "GET", "/", {{"Host", "evil.example"}}).status == 421);

  const std::string own = "http://" + loopback_host(port);
  auto r = raw_http(port, "POST", "/pause", {{"Origin", own}, {"Content-Type", "application/json"}}, "{}");
  CHECK(r.status == 403);  // no token
  r = raw_http(port, "POST", "/pause", {{"Origin", own}, {"X-Dibs-Token", "0123456789abcdef0123456789abcdef"}});
  CHECK(r.status == 403);  // another process's token
  r = raw_http(port, "POST", "/pause", {{"Origin", "http://evil.example"}, {"X-Dibs-Token", c.controls->token()}});
  CHECK(r.status == 403);  // another site, even with the token
  CHECK_FALSE(c.e->paused());
  r = raw_http(port, "POST", "/pause", {{"Origin", own}, {"X-Dibs-Token", c.controls->token()}, {"Content-Type", "application/json"}}, "{}");
  CHECK(r.status == 200);
  CHECK(c.e->paused());

  // /status tells the API's answers; /history gets a sample a second (polled, at most 10 s).
  const auto status = raw_http(port, "GET", "/status");
  CHECK_THAT(status.body, Catch::Contains("\"http\":{\"requests\":"));
  // The handshakes and the waits for a connection, apart from the latency.
  CHECK(std::regex_search(status.body, std::regex(R"("handshakes":\{"count":[1-9][0-9]*,"mean_ms":[0-9]+\.[0-9]{3}\})")));
  CHECK(std::regex_search(status.body, std::regex(R"("connection_waits":\{"count":[1-9][0-9]*,"mean_ms":[0-9]+\.[0-9]{3}\})")));
  test::raw_answer h;
  for (int i = 0; i < 1000; ++i) {
    h = raw_http(port, "GET", "/history");
    if (h.body.find("docs_per_s") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(h.status == 200);
  CHECK_THAT(h.body, Catch::StartsWith("{\"interval_s\":1,\"samples\":[{\"t\":"));
}

TEST_CASE("scraping /status and /metrics asks the store for its counts about once a second", "[controls][stats]") {
  controlled_engine c;
  const auto port = c.port();
  const int before = c.st->stats_calls.load();
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> scrapers;
  std::atomic<int> answered = 0;
  for (int t = 0; t < 4; ++t)
    scrapers.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const auto r = raw_http(port, "GET", (i + t) % 2 ? "/status" : "/metrics");
        if (r.status == 200 && r.body.find("pending") != std::string::npos) ++answered;
      }
    });
  for (auto& s : scrapers) s.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const int calls = c.st->stats_calls.load() - before;
  INFO("100 scrapes in " << seconds << " s: " << calls << " stats() calls");
  CHECK(answered == 100);  // every page still carries the store's counts
  CHECK(calls >= 1);
  CHECK(calls <= static_cast<int>(std::floor(seconds)) + 2);
}

namespace {
// A connection that sends `text` (maybe nothing) and then waits: true when the server closed it
// within 20 s (read returns end of file or a reset), false when it is still open then.
bool closed_by_server(std::uint16_t port, const std::string& text, std::string* answer = nullptr) {
  net::io_context ioc;
  net::ip::tcp::socket s(ioc);
  s.connect({net::ip::make_address("127.0.0.1"), port});
  timeval tv{20, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (!text.empty()) net::write(s, net::buffer(text));
  char buf[4096];
  for (;;) {
    const auto n = ::recv(s.native_handle(), buf, sizeof buf, 0);
    if (n > 0) {
      if (answer) answer->append(buf, static_cast<std::size_t>(n));
      continue;
    }
    return n == 0 || errno == ECONNRESET;
  }
}
}  // namespace

TEST_CASE("control sessions are bounded: a slow request, an idle keep-alive, a connection limit", "[controls][security]") {
  SECTION("timeouts") {
    http::control_options o;
    o.request_timeout = std::chrono::milliseconds(300);
    o.idle_timeout = std::chrono::milliseconds(300);
    controlled_engine c(o);
    const auto port = c.port();
    CHECK(closed_by_server(port, ""));                                  // connected, sent nothing
    CHECK(closed_by_server(port, "GET /status HTTP/1.1\r\nHost: 127"));  // a request that never ends
    std::string answer;                                                 // kept alive, then idle
    CHECK(closed_by_server(port, "GET /status HTTP/1.1\r\nHost: " + loopback_host(port) + "\r\n\r\n", &answer));
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200"));
  }
  SECTION("connection limit") {
    http::control_options o;
    o.max_connections = 2;
    controlled_engine c(o);
    const auto port = c.port();
    net::io_context ioc;
    net::ip::tcp::socket a(ioc), b(ioc);
    a.connect({net::ip::make_address("127.0.0.1"), port});
    b.connect({net::ip::make_address("127.0.0.1"), port});
    // Both slots are taken, by connections that only wait: a third one takes the slot of the one
    // that waited longest (control_slots.hpp), which the server closes.
    CHECK(raw_http(port, "GET", "/status").status == 200);
    CHECK(test::eventually([&] {
      char byte;
      const auto n = ::recv(a.native_handle(), &byte, 1, MSG_DONTWAIT);
      return n == 0 || (n < 0 && errno == ECONNRESET);
    }, std::chrono::seconds(10)));
  }
}
