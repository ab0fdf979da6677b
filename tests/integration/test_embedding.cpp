// dibs as a library inside a server: the engine on the caller's io_context, its controls over
// real HTTP (GET /status, GET /metrics, POST /pause, POST /resume), and the embed_server example
// as a process.
#include "support/inherited_sockets.hpp"
#include "support/process.hpp"
#include "support/raw_http.hpp"

#include <dibs/control/control_server.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <csignal>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// One request to the control port, from a client of its own.
http::response call(std::uint16_t port, http::request::verb method, const std::string& target) {
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), {});
  http::request req;
  req.method = method;
  req.target = target;
  http::origin to{"127.0.0.1", port, false};
  auto fut = net::co_spawn(ioc, c.send(to, req), net::use_future);
  ioc.run();
  return fut.get();
}
http::response get(std::uint16_t port, const std::string& target) { return call(port, http::request::verb::get, target); }
// The controls' key, and a POST as curl sends it with the key.
const std::string control_key = "embedding-test-key-0123456789";
test::raw_answer post(std::uint16_t port, const std::string& target) {
  return test::raw_http(port, "POST", target, {{"Authorization", "Bearer " + control_key}});
}

// A number or a boolean (as 0/1) from the /status JSON.
double status_field(std::uint16_t port, const char* name) {
  auto r = get(port, "/status");
  REQUIRE(r.status == 200);
  simdjson::dom::parser p;
  auto v = p.parse(r.body)[name];
  if (bool b; !v.get_bool().get(b)) return b ? 1 : 0;
  double d = -1;
  REQUIRE_FALSE(v.get_double().get(d));
  return d;
}

// Polls /status until `name` reaches `value` (a state, not a time), bounded.
bool wait_status(std::uint16_t port, const char* name, double value) {
  for (int i = 0; i < 2000; ++i) {
    if (status_field(port, name) == value) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}
}  // namespace

TEST_CASE("an engine on the caller's io_context, paused and resumed over HTTP, with its metrics", "[embed][e2e]") {
  // 400 documents, 20 at a time, 50 ms each: a second of work, so the pause below comes mid-run
  // even when this thread is slow to send it.
  stub::ipapi_stub api(stub::stub_options::loopback(50ms));
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(400, 61);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  engine_config cfg;
  cfg.concurrency = 20;
  cfg.claim_batch = 10;
  engine e(cfg, st, http::make_http_processor_factory(p));

  net::io_context ioc(1);
  const auto sockets_before = test::open_sockets();
  http::control_options o;
  o.key = control_key;
  http::control_server controls(ioc, e, o);
  controls.start();
  e.start_on(ioc);
  std::atomic<bool> joined = false;
  auto joiner = [&]() -> awaitable<void> {
    co_await e.join();
    joined = true;
  };
  net::co_spawn(ioc, joiner(), net::detached);
  std::thread server([&] { ioc.run(); });
  struct on_exit {  // a failed REQUIRE must not leave the server thread running
    net::io_context& ioc;
    std::thread& t;
    ~on_exit() {
      ioc.stop();
      if (t.joinable()) t.join();
    }
  } guard{ioc, server};
  const auto port = controls.port();

  auto paused = post(port, "/pause");
  CHECK(paused.status == 200);
  CHECK(paused.body == "{\"paused\":true}");
  REQUIRE(wait_status(port, "in_flight", 0));  // calls in flight ran to their end
  const double claimed = status_field(port, "claimed");
  const double completed = status_field(port, "completed");
  CHECK(completed < 400);
  // An observation window of a second (a paused dispatcher that still claimed would do so at
  // once, many times): nothing is claimed while paused.
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(100ms);
    CHECK(status_field(port, "claimed") == claimed);
  }
  // What was prefetched went back to the store (the store's counts are up to a second old).
  CHECK(wait_status(port, "leased", 0));
  CHECK(status_field(port, "paused") == 1);

  CHECK(post(port, "/resume").body == "{\"paused\":false}");
  REQUIRE(wait_status(port, "finished", 1));
  CHECK(status_field(port, "completed") == 400);

  auto m = get(port, "/metrics");
  for (int i = 0; i < 2000 && m.body.find("\ndibs_pending 0\n") == std::string::npos; ++i) {
    std::this_thread::sleep_for(5ms);  // the store's counts, refreshed at most once a second
    m = get(port, "/metrics");
  }
  CHECK(m.status == 200);
  CHECK_THAT(m.header("Content-Type"), Catch::StartsWith("text/plain; version=0.0.4"));
  CHECK_THAT(m.body, Catch::Contains("\ndibs_completed_total 400\n"));
  CHECK_THAT(m.body, Catch::Contains("\ndibs_http_responses_total{class=\"2xx\"} 400\n"));
  CHECK_THAT(m.body, Catch::Contains("\ndibs_api_latency_seconds_count 400\n"));
  CHECK_THAT(m.body, Catch::Contains("\ndibs_pending 0\n"));
  CHECK_THAT(m.body, Catch::Contains("# TYPE dibs_claim_batch_size histogram\n"));
  CHECK(get(port, "/nope").status == 404);
  CHECK(get(port, "/pause").status == 405);
  // The controls' sockets (and the API client's) are close-on-exec, like every socket dibs opens.
  CHECK(test::inheritable_sockets_since(sockets_before) == std::vector<std::string>{});

  net::post(ioc, [&] { controls.stop(); });
  server.join();  // run() returns: the engine has ended and the controls are closed
  CHECK(joined);  // join() completed on the caller's io_context
  CHECK(e.summary().completed == 400);
}

TEST_CASE("the embed_server example serves its controls and ends gracefully on SIGTERM", "[embed][e2e]") {
  const std::string port_file = "/tmp/dibs-embed-port-" + std::to_string(::getpid());
  std::remove(port_file.c_str());
  test::child_process server({"env", "DIBS_CONTROL_KEY=" + control_key, DIBS_EMBED_SERVER_PATH, "--port", "0", "--port-file", port_file, "--docs", "500",
                              "--latency-ms", "2", "--concurrency", "50", "--follow"});
  std::uint16_t port = 0;
  for (int i = 0; i < 2000 && !port; ++i) {  // until the server says where it listens
    std::ifstream in(port_file);
    if (!(in >> port)) std::this_thread::sleep_for(5ms);
  }
  REQUIRE(port != 0);
  CHECK(post(port, "/pause").body == "{\"paused\":true}");
  CHECK(post(port, "/resume").body == "{\"paused\":false}");
  REQUIRE(wait_status(port, "completed", 500));
  CHECK(status_field(port, "finished") == 0);  // --follow: it waits for more work
  CHECK_THAT(get(port, "/metrics").body, Catch::Contains("\ndibs_completed_total 500\n"));
  server.signal(SIGTERM);
  std::string out;
  CHECK(server.finish(out) == 0);
  CHECK(test::last_line(out).rfind("summary: completed=500 failed=0 ", 0) == 0);
  std::remove(port_file.c_str());
}
