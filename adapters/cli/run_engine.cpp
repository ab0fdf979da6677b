#include "run_engine.hpp"

#include <adapters/http/control_server.hpp>

#include <optional>

#include <dibs/counters.hpp>
#include <dibs/log.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace dibs::cli {

namespace {
std::string progress_line(const engine& e, std::uint64_t total, double elapsed_s) {
  const auto& f = e.figures();
  const auto done = load(f.completed);
  const auto failed = load(f.failed);
  const double rate = elapsed_s > 0 ? done / elapsed_s : 0;
  char buf[256];
  std::string eta = "-";
  if (total > 0 && rate > 0 && done + failed < total) {
    const auto left = static_cast<long long>((total - done - failed) / rate);
    char e2[32];
    std::snprintf(e2, sizeof e2, "%lldm%02llds", left / 60, left % 60);
    eta = e2;
  }
  if (total > 0)
    std::snprintf(buf, sizeof buf, "done %llu/%llu  %.0f docs/s  in flight %lld  errors %llu  retries %llu  ETA %s",
                  (unsigned long long)done, (unsigned long long)total, rate, (long long)load(f.in_flight),
                  (unsigned long long)failed, (unsigned long long)load(f.retries), eta.c_str());
  else
    std::snprintf(buf, sizeof buf, "done %llu  %.0f docs/s  in flight %lld  errors %llu  retries %llu",
                  (unsigned long long)done, rate, (long long)load(f.in_flight), (unsigned long long)failed,
                  (unsigned long long)load(f.retries));
  std::string line = buf;
  // The API breaker (engine/src/circuit_breaker.hpp): say so while it holds documents back.
  if (load(f.circuit_open) > 0)
    line += "  API DOWN: probing, " + std::to_string(load(f.waiting_for_api)) + " waiting";
  return line;
}
}  // namespace

run_result run_engine_in_foreground(engine& e, std::uint64_t total, bool progress, int metrics_port,
                                    const std::vector<std::string>& metrics_hosts) {
  net::io_context control(1);
  std::optional<http::control_server> controls;
  if (metrics_port >= 0) {
    http::control_options o;
    o.port = static_cast<std::uint16_t>(metrics_port);
    o.allowed_hosts = metrics_hosts;
    controls.emplace(control, e, o);
    controls->start();
    log::warn("metrics and controls on http://127.0.0.1:", controls->port(),
              " (GET /metrics, GET /status; POST /pause, POST /resume with the header X-Dibs-Control: 1)");
  }
  net::signal_set signals(control, SIGINT, SIGTERM);
  bool interrupted = false;
  int stop_signal = 0;
  int signals_seen = 0;
  // A signal always ends the process: should a store call never return (a driver stuck in a
  // loop, a server that stops answering mid-statement), the run is left behind once the
  // shutdown timeout and a margin have passed (5 s after a second signal). Whatever this
  // process held is then left to its leases' expiry: fenced writes keep that safe.
  net::steady_timer must_end(control);
  auto end_by = [&](std::chrono::milliseconds after, int sig) {
    must_end.expires_after(after);
    must_end.async_wait([sig](const boost::system::error_code& ec) {
      if (ec) return;
      log::error("signal ", sig, ": the run did not end in time (a store call does not return); exiting now, "
                 "what it held is left to its leases' expiry");
      std::fflush(stdout);
      std::_Exit(128 + sig);
    });
  };

  std::function<void()> await_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      interrupted = true;
      if (++signals_seen == 1) {
        stop_signal = sig;
        log::warn("signal ", sig, ": stopping (in-flight work may finish; send it again to stop at once)");
        e.stop();
        end_by(e.config().shutdown_timeout + std::chrono::seconds(30), sig);
      } else {
        log::warn("signal ", sig, ": stopping at once");
        e.stop_now();
        end_by(std::chrono::seconds(5), stop_signal);
      }
      await_signal();
    });
  };
  await_signal();

  const bool draw = progress && ::isatty(STDERR_FILENO);
  net::steady_timer tick(control);
  const auto started = std::chrono::steady_clock::now();
  std::function<void()> redraw = [&] {
    tick.expires_after(std::chrono::milliseconds(250));
    tick.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fprintf(stderr, "\r\033[K%s", progress_line(e, total, elapsed).c_str());
      std::fflush(stderr);
      redraw();
    });
  };
  if (draw) redraw();

  e.on_finished([&] {
    net::post(control, [&] {
      signals.cancel();
      tick.cancel();
      must_end.cancel();
      if (controls) controls->stop();
    });
  });
  e.start();
  control.run();
  e.wait();
  if (draw) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "\r\033[K%s\n", progress_line(e, total, elapsed).c_str());
  }
  return {e.summary(), interrupted, stop_signal};
}

}  // namespace dibs::cli
