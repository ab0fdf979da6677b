#include "run_engine.hpp"

#include "exit_watchdog.hpp"
#include "progress_line.hpp"

#include <dibs/control/control_server.hpp>
#include <dibs/http/http_figures.hpp>

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
#include <optional>

namespace dibs::cli {

namespace {
progress_figures figures_of(const engine& e, std::uint64_t total, double rate) {
  const auto& f = e.figures();
  const auto s = e.summary();
  progress_figures p;
  p.total = total;
  p.done = s.completed;
  p.failed = s.failed;
  p.no_data = s.no_data;
  p.retries = s.retries;
  p.answer_calls = s.answer_calls;
  p.answers_shared = s.answers_reused + s.answers_joined;
  p.rate = rate;
  p.paused = e.paused();
  // What the summary does not hold: the moment's state.
  p.in_flight = load(f.in_flight);
  p.retries_waiting = load(f.retries_waiting);
  p.api_down = load(f.circuit_open) > 0;  // the API breaker (engine/src/circuit_breaker.hpp)
  p.waiting_for_api = load(f.waiting_for_api);
  if (const auto* h = f.extras.find<http::http_figures>())
    for (const auto& [origin, v] : h->limits.totals()) p.api_limit = (p.api_limit < 0 ? 0 : p.api_limit) + v.limit;
  return p;
}

// The summary with what the HTTP processors add: the range each API's adaptive limit moved in.
run_summary summary_of(const engine& e) {
  auto s = e.summary();
  if (const auto* h = e.figures().extras.find<http::http_figures>()) {
    const auto limits = h->limits.totals();
    // The calls the run made, and how many of them the API refused (429/503): what an API's
    // quota or bill counts, and the share of refusals a limit ran into.
    const auto throttled = h->throttled.load();
    s.extra_json = ",\"api_calls\":" + std::to_string(h->exchanges()) + ",\"api_refused\":" + std::to_string(h->refused.load()) +
                   ",\"api_throttled\":" + std::to_string(throttled);
    if (h->metered()) {
      s.extra_json += ",\"api_tokens_input\":" + std::to_string(h->tokens_in.load()) +
                      ",\"api_tokens_output\":" + std::to_string(h->tokens_out.load());
      if (h->priced()) s.extra_json += ",\"api_cost\":" + http::http_figures::cost_text(h->cost());
    }
    if (!limits.empty()) s.extra_json += ",\"api_limits\":" + h->limits.json();
    for (const auto& [origin, v] : limits)
      log::info("API ", origin, ": concurrency limit moved in ", v.lowest, "-", v.highest, ", ended at ", v.limit,
                v.decreases ? " (went down " + std::to_string(v.decreases) + " times; the last: " +
                                  std::string(http::to_string(v.last_decrease)) + ")"
                            : std::string());
    for (const auto& [origin, v] : limits)
      if (v.pace_decreases > 0) {
        const auto per_s = std::to_string(static_cast<long long>(v.pace_per_s));
        log::info("API ", origin, ": refused requests for its rate (HTTP 429/503) ", v.pace_decreases,
                  " times; paced at ", per_s, "/s at the end (moved in ", static_cast<long long>(v.pace_lowest), "-",
                  static_cast<long long>(v.pace_highest), "/s); --rate ", per_s,
                  "/s sets that rate from the start");
      }
  }
  return s;
}

std::string url_host(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}
}  // namespace

run_result run_engine_in_foreground(engine& e, const foreground_options& o) {
  net::io_context control(1);
  std::optional<http::control_server> controls;
  if (o.metrics_port >= 0) {
    http::control_options c;
    c.address = o.metrics_address;
    c.port = static_cast<std::uint16_t>(o.metrics_port);
    c.allowed_hosts = o.metrics_hosts;
    c.admin = o.admin;
    c.key = o.control_key;
    controls.emplace(control, e, c);
    try {
      controls->start();
    } catch (const std::exception& ex) {
      throw std::invalid_argument(std::string(ex.what()) + " (--metrics-address, --metrics-port)");
    }
    log::warn("metrics and controls on http://", url_host(o.metrics_address), ":", controls->port(),
              " (GET / the dashboard, GET /metrics, /status, /workers; POST /pause, /resume, /release, /concurrency, /rate, "
              "/retry from this host, ",
              o.control_key.empty() ? "by the dashboard's buttons only: programs need a key, --control-key-file)"
                                    : "by the dashboard's buttons, or by programs with the header Authorization: Bearer KEY)");
  }
  net::signal_set signals(control, SIGINT, SIGTERM);
  bool interrupted = false;
  int stop_signal = 0;
  int signals_seen = 0;
  // A signal always ends the process: should a store call never return (a driver stuck in a
  // loop, a server that stops answering mid-statement), during the run or after it, the process
  // ends once the shutdown timeout and a margin have passed (5 s after a second signal).
  auto end_by = [](std::chrono::milliseconds after, int sig) {
    exit_by(std::chrono::steady_clock::now() + after, 128 + sig,
            "signal " + std::to_string(sig) + ": the run did not end in time (a store call does not return); exiting "
            "now, what it held is left to its leases' expiry");
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

  // On a terminal only: `\r` redraws in a file or a pipe are noise (run_engine.hpp).
  const bool draw = o.progress && ::isatty(STDERR_FILENO);
  net::steady_timer tick(control);
  rate_window recent(std::chrono::seconds(10));
  auto draw_now = [&] {
    const auto& f = e.figures();
    recent.add(std::chrono::steady_clock::now(), load(f.completed) + load(f.no_data) + load(f.failed));
    // One column short of the width: a line that fills the last column wraps on some terminals.
    const auto width = terminal_width();
    log::show_status(progress_line(figures_of(e, o.total, recent.per_second()), width > 1 ? width - 1 : width));
  };
  std::function<void()> redraw = [&] {
    tick.expires_after(std::chrono::milliseconds(250));
    tick.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      draw_now();
      redraw();
    });
  };
  if (draw) redraw();

  e.on_finished([&] {
    net::post(control, [&] {
      signals.cancel();
      tick.cancel();
      if (controls) controls->stop();
    });
  });
  {
    // The names this process's leases carry: what GET /workers, dibs status and dibs release say.
    const auto& id = e.worker_prefix();
    const auto shards = e.config().effective_shards();
    log::info("worker ", id, ": leases taken as ", id, "-0", shards > 1 ? " .. " + id + "-" + std::to_string(shards - 1) : "",
              " (dibs release --worker ", id, " frees them)");
  }
  e.start();
  control.run();
  e.wait();
  if (draw) {
    draw_now();
    log::end_status(true);
  }
  // Where the user looks at the end: the calls the API saw, and those it answered 429 (each one a
  // call the API may bill that bought nothing).
  std::string api_calls;
  if (const auto* h = e.figures().extras.find<http::http_figures>(); h && h->exchanges() > 0)
  {
    api_calls = "the API: " + std::to_string(h->exchanges()) + " calls made, " + std::to_string(h->throttled.load()) +
                " of them answered 429 (too many requests)";
    // An LLM API's bill: the tokens its answers say they used, and their cost at --price.
    if (h->metered()) {
      api_calls += "; " + std::to_string(h->tokens_in.load() + h->tokens_out.load()) + " tokens used (" +
                   std::to_string(h->tokens_in.load()) + " input, " + std::to_string(h->tokens_out.load()) + " output)";
      if (h->priced()) api_calls += ", costing " + http::http_figures::cost_text(h->cost()) + " at --price";
    }
  }
  return {summary_of(e), interrupted, stop_signal, std::move(api_calls)};
}

}  // namespace dibs::cli
