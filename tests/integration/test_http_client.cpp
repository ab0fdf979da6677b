// The HTTP client and processor against the real stub server on loopback.
#include "support/raw_http.hpp"
#include "support/inherited_sockets.hpp"

#include <dibs/http/http_processor.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <future>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
struct client_fixture {
  explicit client_fixture(http::client_options o = {}) : client(ioc.get_executor(), o) { stub.start(); }

  http::response get(const std::string& target, std::uint16_t port = 0) {
    http::origin to{"127.0.0.1", port ? port : stub.port(), false};
    auto fut = net::co_spawn(ioc, client.get(to, target), net::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  }

  stub::ipapi_stub stub{stub::stub_options{}};
  net::io_context ioc{1};
  http::client client;
};

struct processor_fixture {
  explicit processor_fixture(const std::string& path_template, http::client_options o = {}, bool no_data_fails = false) {
    stub.start();
    auto opts = std::make_shared<http::processor_options>();
    opts->url = http::url_template::parse(stub.base_url() + path_template);
    opts->http = o;
    opts->no_data_fails = no_data_fails;
    opts->backoff_base = 10ms;
    proc = std::make_unique<http::http_processor>(ioc.get_executor(), opts);
  }
  outcome run(const std::string& ip) {
    job j;
    j.id = "1";
    j.attempts = 1;
    j.fields.push_back(job_field{"originatingIp", job_field::state::string, ip, {}});
    auto fut = net::co_spawn(ioc, proc->process(j), net::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  }
  stub::ipapi_stub stub{stub::stub_options{}};
  net::io_context ioc{1};
  std::unique_ptr<http::http_processor> proc;
};

using test::a_closed_port;
}  // namespace

TEST_CASE("the client reuses one kept-alive connection for sequential requests", "[http]") {
  client_fixture f;
  for (int i = 0; i < 20; ++i) {
    auto r = f.get("/json/8.8.8." + std::to_string(i));
    REQUIRE_FALSE(r.ec);
    CHECK(r.status == 200);
    CHECK(r.body == stub::answer_for("8.8.8." + std::to_string(i)));
    CHECK(r.reused == (i > 0));
  }
  CHECK(f.client.stats().connects == 1);
  CHECK(f.client.stats().reuses == 19);
  CHECK(f.stub.connections() == 1);
  CHECK(f.stub.requests() == 20);
}

TEST_CASE("no socket of the client or the stub is inherited by a child process", "[http]") {
  // A socket a child inherits stays open after close() here: the server would never see the
  // connection end. Every socket dibs opens is close-on-exec.
  const auto before = test::open_sockets();
  client_fixture f;  // the stub's listening socket
  REQUIRE(f.get("/json/8.8.8.8").status == 200);  // the client's connection, kept alive, and the stub's end of it
  REQUIRE(test::open_sockets().size() >= before.size() + 3);
  CHECK(test::inheritable_sockets_since(before) == std::vector<std::string>{});
}

TEST_CASE("the client gives up at the request timeout when the server never answers", "[http]") {
  http::client_options o;
  o.request_timeout = 300ms;
  client_fixture f(o);
  auto r = f.get("/test/hang");
  CHECK(r.ec == boost::beast::error::timeout);
  CHECK(r.stage == "read");
  CHECK(f.client.idle_connections() == 0);  // a timed-out connection is never reused
}

TEST_CASE("the client refuses bodies over the cap", "[http]") {
  http::client_options o;
  o.max_body = 1000;
  client_fixture f(o);
  CHECK(f.get("/test/big/500").status == 200);
  auto r = f.get("/test/big/5000");
  CHECK(r.ec == boost::beast::http::error::body_limit);
}

TEST_CASE("the client reports a refused connection", "[http]") {
  client_fixture f;
  auto r = f.get("/json/8.8.8.8", a_closed_port());
  CHECK(r.ec == net::error::connection_refused);
  CHECK(r.stage == "connect");
  CHECK(r.describe().rfind("connect: ", 0) == 0);
}

TEST_CASE("the client reports a connection closed without an answer", "[http]") {
  client_fixture f;
  auto r = f.get("/test/close");
  // A new connection the server closed before answering: the end of the stream, nothing else.
  CHECK(r.ec == boost::beast::http::error::end_of_stream);
  CHECK(r.stage == "read");
}

TEST_CASE("the processor keeps a valid answer as the result", "[http][processor]") {
  processor_fixture f("/json/{originatingIp}");
  auto o = f.run("8.8.4.4");
  REQUIRE(o.k == outcome::kind::done);
  CHECK(o.result == stub::answer_for("8.8.4.4"));
}

TEST_CASE("ip-api's 'no data' for a private address is the item's answer, marked no data, and --no-data-fails fails it",
          "[http][processor][no-data]") {
  processor_fixture f("/json/{originatingIp}");
  auto o = f.run("192.168.1.1");
  CHECK(o.k == outcome::kind::done);
  CHECK(o.no_data);
  CHECK(o.result == stub::answer_for("192.168.1.1"));  // what the Python recipe stores
  CHECK(o.why == "the API has no data: private range");
  CHECK_FALSE(f.run("8.8.4.4").no_data);

  processor_fixture fails("/json/{originatingIp}", {}, true);
  auto failed = fails.run("192.168.1.1");
  CHECK(failed.k == outcome::kind::fail);
  CHECK(failed.why == "the API has no data: private range");
  CHECK(fails.run("not-an-ip").why == "the API has no data: invalid query");
}

TEST_CASE("the processor retries invalid JSON and non-object bodies", "[http][processor]") {
  processor_fixture garbage("/test/garbage");
  auto o = garbage.run("x");
  CHECK(o.k == outcome::kind::retry);
  CHECK_THAT(o.why, Catch::Contains("invalid JSON"));
  CHECK(o.http_status == 200);
  processor_fixture array("/test/array");
  CHECK_THAT(array.run("x").why, Catch::Contains("not an object"));
}

TEST_CASE("the processor sorts HTTP statuses into retry and fail", "[http][processor]") {
  for (int status : {408, 429, 500, 502, 503}) {
    processor_fixture f("/test/status/" + std::to_string(status));
    auto o = f.run("x");
    CHECK(o.k == outcome::kind::retry);
    CHECK(o.http_status == status);
  }
  for (int status : {400, 401, 403, 404, 422}) {
    processor_fixture f("/test/status/" + std::to_string(status));
    auto o = f.run("x");
    CHECK(o.k == outcome::kind::fail);
    CHECK(o.http_status == status);
    CHECK(o.why.rfind("HTTP " + std::to_string(status), 0) == 0);
  }
}

TEST_CASE("the processor fails oversized bodies and retries timeouts and refusals", "[http][processor]") {
  http::client_options small;
  small.max_body = 100;
  processor_fixture big("/test/big/1000", small);
  auto o = big.run("x");
  CHECK(o.k == outcome::kind::fail);
  CHECK_THAT(o.why, Catch::Contains("larger than 100 bytes"));

  http::client_options quick;
  quick.request_timeout = 200ms;
  processor_fixture hang("/test/hang", quick);
  auto t = hang.run("x");
  CHECK(t.k == outcome::kind::retry);
  CHECK_THAT(t.why, Catch::Contains("timed out"));

  net::io_context ioc;
  auto opts = std::make_shared<http::processor_options>();
  opts->url = http::url_template::parse("http://127.0.0.1:" + std::to_string(a_closed_port()) + "/json/{originatingIp}");
  http::http_processor p(ioc.get_executor(), opts);
  job j;
  j.attempts = 1;
  j.fields.push_back(job_field{"originatingIp", job_field::state::string, "8.8.8.8", {}});
  auto fut = net::co_spawn(ioc, p.process(j), net::use_future);
  ioc.run();
  auto r = fut.get();
  CHECK(r.k == outcome::kind::retry);
  CHECK_THAT(r.why, Catch::Contains("connect: Connection refused"));
}

TEST_CASE("the processor fails a job whose source field is missing or not a string", "[http][processor]") {
  processor_fixture f("/json/{originatingIp}");
  job j;
  j.attempts = 1;
  auto fut = net::co_spawn(f.ioc, f.proc->process(j), net::use_future);
  f.ioc.run();
  auto o = fut.get();
  CHECK(o.k == outcome::kind::fail);
  CHECK(o.why == "source field 'originatingIp' is missing");
  CHECK(f.stub.requests() == 0);
}

TEST_CASE("full-jitter backoff stays within its bounds", "[http]") {
  std::mt19937_64 rng(3);
  for (int attempt = 1; attempt < 40; ++attempt) {
    auto d = http::full_jitter_backoff(attempt, 100ms, 5000ms, rng);
    CHECK(d >= 0ms);
    CHECK(d <= std::min<std::chrono::milliseconds>(5000ms, 100ms * (1LL << std::min(attempt - 1, 20))));
  }
}

TEST_CASE("many first requests at once to a host NAME: one lookup, its addresses once each", "[http]") {
  // Every concurrent first request used to look the name up and append to the list another
  // request's connect loop was iterating (a use after free the sanitizer build sees).
  stub::ipapi_stub api{stub::stub_options{}};
  api.start();
  net::io_context ioc{1};
  http::client c(ioc.get_executor(), {});
  const http::origin to{"localhost", api.port(), false};
  std::vector<std::future<http::response>> calls;
  for (int i = 0; i < 50; ++i) calls.push_back(net::co_spawn(ioc, c.get(to, "/json/8.8.8." + std::to_string(i)), net::use_future));
  ioc.run();
  for (int i = 0; i < 50; ++i) {
    auto r = calls[i].get();
    INFO(r.describe());
    CHECK(r.status == 200);
    CHECK(r.body == stub::answer_for("8.8.8." + std::to_string(i)));
  }
  CHECK(c.stats().resolves == 1);
  const auto eps = c.endpoints(to);
  REQUIRE_FALSE(eps.empty());
  for (std::size_t i = 0; i < eps.size(); ++i)
    for (std::size_t k = i + 1; k < eps.size(); ++k) CHECK(eps[i] != eps[k]);
}

TEST_CASE("a name whose every address refuses is looked up again at the next request", "[http]") {
  net::io_context ioc{1};
  http::client c(ioc.get_executor(), {});
  const http::origin to{"localhost", a_closed_port(), false};
  for (int i = 0; i < 2; ++i) {
    auto fut = net::co_spawn(ioc, c.get(to, "/json/8.8.8.8"), net::use_future);
    ioc.restart();
    ioc.run();
    CHECK(fut.get().stage == "connect");
  }
  CHECK(c.stats().resolves == 2);
}

TEST_CASE("many first requests at once to a NAME whose address refuses: each fails cleanly", "[http]") {
  // The connect loop goes on to the next address after a refusal: with the old shared list, a
  // lookup finishing meanwhile moved it, and the loop read freed memory (ASan: heap-use-after-free
  // in open()). Each loop now holds its own snapshot.
  net::io_context ioc{1};
  http::client c(ioc.get_executor(), {});
  const http::origin to{"localhost", a_closed_port(), false};
  std::vector<std::future<http::response>> calls;
  for (int i = 0; i < 50; ++i) calls.push_back(net::co_spawn(ioc, c.get(to, "/json/8.8.8.8"), net::use_future));
  ioc.run();
  for (auto& f : calls) {
    auto r = f.get();
    CHECK(r.stage == "connect");
    CHECK(r.ec == net::error::connection_refused);
  }
  const auto eps = c.endpoints(to);
  for (std::size_t i = 0; i < eps.size(); ++i)
    for (std::size_t k = i + 1; k < eps.size(); ++k) CHECK(eps[i] != eps[k]);
}
