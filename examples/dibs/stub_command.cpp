// `dibs stub`: the ip-api-compatible stub server alone, until SIGINT/SIGTERM.
#include "commands.hpp"
#include "duration_flag.hpp"

#include <examples/stub/ipapi_stub.hpp>

#include <dibs/net.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace dibs::cli {

command add_stub_command(CLI::App& app) {
  auto* sub = app.add_subcommand("stub", "Run the ip-api-compatible stub server (GET /json/{ip}) until interrupted");
  struct flags {
    std::uint16_t port = 8080;
    std::string address = "127.0.0.1";
    long latency_ms = 0;
    std::size_t threads = 1;
    std::string rate_limit;
  };
  auto f = std::make_shared<flags>();
  sub->add_option("--port", f->port, "TCP port; 0 picks a free one (printed)")->capture_default_str();
  sub->add_option("--address", f->address, "address to listen on (loopback by default)")->capture_default_str();
  sub->add_option("--latency-ms", f->latency_ms, "delay before each answer")->check(CLI::Range(0L, 3'600'000L))->capture_default_str();
  sub->add_option("--threads", f->threads, "server threads")->check(CLI::Range(1, 64))->capture_default_str();
  sub->add_option("--rate-limit", f->rate_limit,
                  "answer like ip-api's limit: N/min or N/s per fixed window, then 429 with X-Rl: 0 and X-Ttl");

  return [f] {
    stub::stub_options o{f->address, f->port, std::chrono::milliseconds(f->latency_ms), f->threads};
    if (!f->rate_limit.empty()) {
      const auto slash = f->rate_limit.find('/');
      const std::string unit = slash == std::string::npos ? "" : f->rate_limit.substr(slash + 1);
      const long n = std::atol(f->rate_limit.c_str());
      if (n <= 0 || (unit != "s" && unit != "min"))
        throw std::invalid_argument("--rate-limit '" + f->rate_limit + "': expected N/min or N/s");
      o.rate_limit = static_cast<std::size_t>(n);
      o.rate_window = unit == "s" ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(60'000);
    }
    stub::ipapi_stub server(o);
    server.start();
    std::printf("stub: listening on http://%s:%u (GET /json/{ip}), latency %ld ms\n", f->address.c_str(),
                server.port(), f->latency_ms);
    std::fflush(stdout);
    net::io_context control(1);
    net::signal_set signals(control, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { server.stop(); });
    control.run();
    std::printf("stub: served %llu requests on %llu connections\n", (unsigned long long)server.requests(),
                (unsigned long long)server.connections());
    return 0;
  };
}

}  // namespace dibs::cli
