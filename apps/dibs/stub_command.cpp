// `dibs stub`: the ip-api-compatible stub server alone, until SIGINT/SIGTERM.
#include "commands.hpp"
#include "duration_flag.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/net.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/system/system_error.hpp>

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
    double error_rate = 0, timeout_rate = 0, garbage_rate = 0, big_rate = 0, reset_rate = 0, poison_rate = 0;
    long idle_close_ms = 0;
    std::uint64_t seed = 1;
    std::string tls_cert, tls_key;
    bool per_second = false;
  };
  auto f = std::make_shared<flags>();
  sub->add_option("--port", f->port, "TCP port; 0 picks a free one (printed)")->type_name("PORT")->capture_default_str();
  sub->add_option("--address", f->address, "address to listen on (loopback by default)")->type_name("ADDR")->capture_default_str();
  sub->add_option("--latency-ms", f->latency_ms, "delay before each answer")->type_name("MS")->check(CLI::Range(0L, 3'600'000L))->capture_default_str();
  sub->add_option("--threads", f->threads, "server threads")->type_name("N")->check(CLI::Range(1, 64))->capture_default_str();
  sub->add_option("--rate-limit", f->rate_limit,
                  "answer like ip-api's limit: N/min or N/s per fixed window, then 429 with X-Rl: 0 and X-Ttl")
      ->type_name("N/s|N/min");
  auto rate = [&](const char* name, double& v, const char* what) {
    sub->add_option(name, v, what)->type_name("SHARE")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  };
  rate("--error-rate", f->error_rate, "share of /json and /batch requests answered 500");
  rate("--timeout-rate", f->timeout_rate, "share never answered");
  rate("--garbage-rate", f->garbage_rate, "share answered 200 with truncated JSON");
  rate("--big-rate", f->big_rate, "share answered with a 2 MiB body");
  rate("--reset-rate", f->reset_rate, "share cut off mid-response (the connection closes)");
  rate("--poison-rate", f->poison_rate, "share of public addresses answered with poison a store may refuse (fixed per address and --seed)");
  sub->add_option("--idle-close-ms", f->idle_close_ms, "close a kept-alive connection idle this long (0: after 120 s)")->type_name("MS")
      ->check(CLI::Range(0L, 3'600'000L))->capture_default_str();
  sub->add_option("--seed", f->seed, "seed of the fault draws")->type_name("N")->capture_default_str();
  sub->add_option("--tls-cert", f->tls_cert, "serve HTTPS with this PEM certificate chain")->type_name("FILE")->check(CLI::ExistingFile);
  sub->add_option("--tls-key", f->tls_key, "... and this PEM private key")->type_name("FILE")->check(CLI::ExistingFile);
  sub->add_flag("--per-second", f->per_second, "at the end, print how many /json and /batch answers were served in each second");
  sub->footer(
      "Examples:\n"
      "  dibs stub --port 8080\n"
      "  dibs stub --port 0 --rate-limit 45/min --error-rate 0.05   (the port it took is printed)\n"
      "  dibs stub --address 0.0.0.0 --port 9000 --latency-ms 50\n"
      "SHARE is a fraction from 0 to 1 of the requests.");

  return [f] {
    auto o = stub::stub_options::loopback(std::chrono::milliseconds(f->latency_ms));
    o.address = f->address;
    o.port = f->port;
    o.threads = f->threads;
    if (!f->rate_limit.empty()) {
      const auto slash = f->rate_limit.find('/');
      const std::string unit = slash == std::string::npos ? "" : f->rate_limit.substr(slash + 1);
      const long n = std::atol(f->rate_limit.c_str());
      if (n <= 0 || (unit != "s" && unit != "min"))
        throw std::invalid_argument("--rate-limit '" + f->rate_limit + "': expected N/min or N/s");
      o.rate_limit = static_cast<std::size_t>(n);
      o.rate_window = unit == "s" ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(60'000);
    }
    o.error_rate = f->error_rate;
    o.timeout_rate = f->timeout_rate;
    o.garbage_rate = f->garbage_rate;
    o.big_rate = f->big_rate;
    o.reset_rate = f->reset_rate;
    if (o.error_rate + o.timeout_rate + o.garbage_rate + o.big_rate + o.reset_rate > 1.0)
      throw std::invalid_argument("the fault rates add up to more than 1");
    o.seed = f->seed;
    o.poison_rate = f->poison_rate;
    o.poison_seed = f->seed;
    o.idle_close = std::chrono::milliseconds(f->idle_close_ms);
    if (f->tls_cert.empty() != f->tls_key.empty()) throw std::invalid_argument("--tls-cert and --tls-key go together");
    o.tls_cert_file = f->tls_cert;
    o.tls_key_file = f->tls_key;
    o.record = f->per_second;
    boost::system::error_code bad_address;
    net::ip::make_address(f->address, bad_address);
    if (bad_address) throw std::invalid_argument("--address '" + f->address + "' is not an IP address");
    stub::ipapi_stub server(o);
    try {
      server.start();
    } catch (const boost::system::system_error& e) {
      // Told in the user's words, without Boost's source location.
      if (e.code() == boost::system::errc::address_in_use)
        throw std::invalid_argument("port " + std::to_string(f->port) + " is in use (--port)");
      throw std::invalid_argument("cannot listen on " + f->address + ":" + std::to_string(f->port) +
                                  " (--address, --port): " + e.code().message());
    }
    std::printf("stub: listening on %s://%s:%u (GET /json/{ip}, POST /batch), latency %ld ms\n",
                f->tls_cert.empty() ? "http" : "https", f->address.c_str(), server.port(), f->latency_ms);
    std::fflush(stdout);
    net::io_context control(1);
    net::signal_set signals(control, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { server.stop(); });
    control.run();
    const auto faults = server.faults();
    std::printf("stub: served %llu requests on %llu connections (at most %llu at once); 429s %llu; faults: errors %llu, "
                "timeouts %llu, garbage %llu, big %llu, resets %llu\n",
                (unsigned long long)server.requests(), (unsigned long long)server.connections(),
                (unsigned long long)server.peak_connections(),
                (unsigned long long)server.rate_limited(), (unsigned long long)faults.errors,
                (unsigned long long)faults.timeouts, (unsigned long long)faults.garbage, (unsigned long long)faults.big,
                (unsigned long long)faults.resets);
    if (f->per_second) {
      const auto counts = server.served_per_second();
      for (std::size_t i = 0; i < counts.size(); ++i)
        std::printf("stub: second %zu: %llu answers\n", i, (unsigned long long)counts[i]);
    }
    return 0;
  };
}

}  // namespace dibs::cli
