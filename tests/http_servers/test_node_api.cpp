// Node's http server at its defaults closes a kept-alive connection once it has been idle for
// keepAliveTimeout and a second more (Node 20: 6 s). A request that goes out on such a connection
// as the server closes it is lost with the connection: it costs a resend on a new one, never an
// item's attempt. Here keepAliveTimeout is 1 ms (a close after a second idle) and requests come
// about a second apart, so the close and the request meet.
#include "http_servers/small_api.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <dibs/http/client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <random>

using namespace dibs;
using namespace std::chrono_literals;

TEST_CASE("Node's http server: a kept-alive connection closed as a request goes out costs a resend, never an answer",
          "[http][node]") {
  test::node_api api({"--keep-alive-timeout", "1"});
  net::io_context ioc;
  http::client c(ioc.get_executor(), http::client_options{});  // idle_timeout 4 s: longer than the server's
  const http::origin to{"127.0.0.1", static_cast<std::uint16_t>(api.port()), false};
  int answered = 0, other = 0;
  auto calls = [&]() -> awaitable<void> {
    std::mt19937 rng(7);
    for (int i = 0; i < 16; ++i) {
      // Around the server's second: some before its close, some at it, some after.
      net::steady_timer t(co_await net::this_coro::executor, std::chrono::milliseconds(985 + rng() % 31));
      co_await t.async_wait(net::use_awaitable);
      const auto r = co_await c.get(to, "/json/10.0.0." + std::to_string(i));
      if (r.status == 200) ++answered;
      else ++other;
      if (r.status != 200) UNSCOPED_INFO("call " << i << ": " << r.describe());
    }
  };
  net::co_spawn(ioc, calls(), net::detached);
  ioc.run();
  CHECK(answered == 16);
  CHECK(other == 0);
  INFO("stale connections replaced: " << c.stats().stale_retries << ", found closed and dropped: " << c.stats().closed_idle
                                        << ", connections: " << c.stats().connects);
  // The server did close under us: a connection found closed before use (dropped), or one that
  // closed as the request went out (it reached no server: sent again).
  CHECK(c.stats().stale_retries + c.stats().closed_idle > 0);
  CHECK(c.stats().connects > 1);
}

TEST_CASE("Node's http server: dibs enrich with --max-attempts 1 through its idle closes fails no item", "[http][node]") {
  test::node_api api({"--keep-alive-timeout", "1"});
  const auto dir = test::scratch_dir("node-api", "enrich");
  const auto in = (dir / "in.jsonl").string();
  {
    std::ofstream f(in);
    for (int i = 0; i < 12; ++i) f << "{\"id\":" << i << ",\"ip\":\"10.1.0." << i << "\"}\n";
  }
  // A call a second: each connection idles about the server's second before it is used again.
  const auto [code, out] = test::run_dibs({"enrich", "--store", "jsonl:" + in, "--out", (dir / "out.jsonl").string(), "--source",
                                           "ip", "--url", api.base_url() + "/json/{ip}", "--rate", "1/s", "--max-attempts", "1",
                                           "--no-preflight", "--no-progress"});
  INFO(out);
  CHECK(code == 0);
  CHECK(out.find("this run: 12 done, 0 failed") != std::string::npos);
}
