// The engine's HTTP controls against what a web page in the user's browser can send (a
// cross-site "simple" POST, DNS rebinding), their session bounds, and the store's counts
// fetched at most about once a second however often /status and /metrics are scraped.
#include "support/raw_http.hpp"

#include <adapters/http/control_server.hpp>
#include <adapters/http/http_processor.hpp>
#include <adapters/memory/memory_store.hpp>
#include <adapters/demo_api/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

using namespace dibs;
using test::raw_http;

namespace {

// A memory store that counts its stats() calls (a full-table count on a real store).
class counting_store final : public store {
 public:
  std::atomic<int> stats_calls{0};
  awaitable<std::vector<job>> claim(claim_request r) override { return inner_.claim(std::move(r)); }
  awaitable<write_result> complete(std::vector<completion> b) override { return inner_.complete(std::move(b)); }
  awaitable<renew_result> renew(std::vector<renewal> b, millis l) override { return inner_.renew(std::move(b), l); }
  awaitable<write_result> release(std::vector<release_item> b) override { return inner_.release(std::move(b)); }
  awaitable<write_result> fail(std::vector<failure> b) override { return inner_.fail(std::move(b)); }
  awaitable<store_stats> stats() override {
    ++stats_calls;
    return inner_.stats();
  }
  std::string describe() const override { return "counting " + inner_.describe(); }
  memory_store& inner() { return inner_; }

 private:
  memory_store inner_;
};

// An engine (--follow, so it keeps running) on an io_context of its own thread, with its controls.
struct controlled_engine {
  stub::ipapi_stub api{stub::stub_options::loopback(std::chrono::milliseconds(1))};
  std::shared_ptr<counting_store> st = std::make_shared<counting_store>();
  std::unique_ptr<engine> e;
  net::io_context ioc{1};
  std::unique_ptr<http::control_server> controls;
  std::thread runner;

  template <class... Args>
  explicit controlled_engine(Args&&... control_args) {
    api.start();
    st->inner().seed_random_ips(20, 7);
    http::processor_options p;
    p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
    engine_config cfg;
    cfg.concurrency = 4;
    cfg.follow = true;
    e = std::make_unique<engine>(cfg, st, http::make_http_processor_factory(p));
    controls = std::make_unique<http::control_server>(ioc, *e, std::forward<Args>(control_args)...);
    controls->start();
    e->start_on(ioc);
    runner = std::thread([this] { ioc.run(); });
  }
  ~controlled_engine() {
    e->stop();
    net::post(ioc, [this] { controls->stop(); });
    runner.join();
    api.stop();
  }
  std::uint16_t port() const { return controls->port(); }
};

std::string host_of(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

}  // namespace

TEST_CASE("the controls refuse a web page's cross-site POST and a rebound Host, and take a POST with the header",
          "[controls][security]") {
  controlled_engine c;
  const auto port = c.port();
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
  // A POST without the header (what an HTML form sends) is refused too.
  r = raw_http(port, "POST", "/pause", {{"Content-Type", "application/x-www-form-urlencoded"}}, "a=b");
  CHECK(r.status == 403);
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
  r = raw_http(port, "POST", "/pause", {{"X-Dibs-Control", "1"}});
  CHECK(r.status == 200);
  CHECK(r.body == "{\"paused\":true}");
  CHECK(c.e->paused());
  // A page the controls served themselves (same origin) may POST with the page's token; the
  // header alone is not enough from a browser (control_access.hpp).
  r = raw_http(port, "POST", "/resume", {{"Origin", "http://" + host_of(port)}, {"X-Dibs-Control", "1"}});
  CHECK(r.status == 403);
  CHECK(c.e->paused());
  r = raw_http(port, "POST", "/resume", {{"Origin", "http://" + host_of(port)}, {"X-Dibs-Token", c.controls->token()}});
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

  const std::string own = "http://" + host_of(port);
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

TEST_CASE("control sessions are bounded: a slow request, an idle keep-alive, too many connections", "[controls][security]") {
  SECTION("timeouts") {
    http::control_options o;
    o.request_timeout = std::chrono::milliseconds(300);
    o.idle_timeout = std::chrono::milliseconds(300);
    controlled_engine c(o);
    const auto port = c.port();
    CHECK(closed_by_server(port, ""));                                  // connected, sent nothing
    CHECK(closed_by_server(port, "GET /status HTTP/1.1\r\nHost: 127"));  // a request that never ends
    std::string answer;                                                 // kept alive, then idle
    CHECK(closed_by_server(port, "GET /status HTTP/1.1\r\nHost: " + host_of(port) + "\r\n\r\n", &answer));
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
    // Both slots are taken once the server has accepted them: a third connection is closed
    // unanswered. (Polled: the server accepts a and b on its own thread.)
    bool refused = false;
    for (int i = 0; i < 200 && !refused; ++i) {
      refused = raw_http(port, "GET", "/status").status == 0;
      if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(refused);
    a.close();  // a slot frees: requests are answered again
    bool answered = false;
    for (int i = 0; i < 200 && !answered; ++i) {
      answered = raw_http(port, "GET", "/status").status == 200;
      if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(answered);
  }
}
