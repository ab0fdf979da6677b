// An async C++ server that embeds dibs: one io_context, run by this thread, hosts both the
// engine (one shard) and an HTTP server with the engine's controls:
//   GET / (the dashboard: open it in a browser), GET /status, GET /metrics (Prometheus),
//   POST /pause, POST /resume.
// The work: documents in a memory store, looked up through an in-process ip-api stub. With
// --follow the engine waits for more work instead of ending; SIGINT/SIGTERM stop it gracefully.
//
//   DIBS_CONTROL_KEY="$(cat ~/.dibs-control-key)" embed_server --port 8088 --docs 100000 --latency-ms 20
//   curl localhost:8088/status; curl localhost:8088/metrics
//   curl -X POST -H @<(printf 'Authorization: Bearer %s' "$(cat ~/.dibs-control-key)") localhost:8088/pause
// (a program's POST needs the key, a page's the dashboard's token, and every request a Host
// naming this server: control_access.hpp)
#include <dibs/control/control_server.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

using namespace dibs;

int main(int argc, char** argv) {
  CLI::App app{"dibs embedded in a Beast server, with HTTP controls"};
  std::uint16_t port = 8088;
  std::string port_file;
  std::size_t docs = 10'000, concurrency = 200;
  long latency_ms = 5;
  bool follow = false;
  app.add_option("--port", port, "control port (0: any free one)")->capture_default_str();
  app.add_option("--port-file", port_file, "write the port here once listening");
  app.add_option("--docs", docs, "documents to enrich")->capture_default_str();
  app.add_option("--concurrency", concurrency, "pipelines")->capture_default_str();
  app.add_option("--latency-ms", latency_ms, "the stub's delay per answer")->capture_default_str();
  app.add_flag("--follow", follow, "keep running when the work is done (until SIGINT/SIGTERM)");
  CLI11_PARSE(app, argc, argv);

  try {
    stub::ipapi_stub api(stub::stub_options::loopback(std::chrono::milliseconds(latency_ms)));
    api.start();
    auto st = std::make_shared<memory_store>();
    st->seed_random_ips(docs, 1);

    http::processor_options p;
    p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
    engine_config cfg;
    cfg.concurrency = concurrency;
    cfg.follow = follow;
    engine e(cfg, st, http::make_http_processor_factory(p));

    net::io_context ioc(1);  // the server's own: the engine and the controls share it
    http::control_options o;
    o.port = port;
    if (const char* key = std::getenv("DIBS_CONTROL_KEY"); key && *key) {  // else: the dashboard's buttons only
      if (const auto problem = http::control_key_problem(key); !problem.empty())
        throw std::invalid_argument("DIBS_CONTROL_KEY " + problem);
      o.key = key;
    }
    http::control_server controls(ioc, e, o);
    controls.start();
    e.start_on(ioc);

    net::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
      if (!ec) e.stop();
    });
    // When the engine has ended, the server closes and run() returns.
    auto closer = [&]() -> awaitable<void> {
      co_await e.join();
      controls.stop();
      signals.cancel();
    };
    net::co_spawn(ioc, closer(), net::detached);

    std::printf("embed_server: controls on http://127.0.0.1:%u (GET / the dashboard, GET /status, GET /metrics; POST /pause, "
                "POST /resume with the header Authorization: Bearer DIBS_CONTROL_KEY)\n",
                controls.port());
    std::fflush(stdout);
    if (!port_file.empty()) {  // written whole, then renamed: a reader never sees half of it
      std::ofstream(port_file + ".tmp") << controls.port() << "\n";
      std::rename((port_file + ".tmp").c_str(), port_file.c_str());
    }
    ioc.run();
    api.stop();
    const auto s = e.summary();
    std::printf("%s\n", s.line().c_str());
    return 0;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "embed_server: %s\n", ex.what());
    return 2;
  }
}
