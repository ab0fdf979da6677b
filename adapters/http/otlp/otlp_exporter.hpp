// Spans to an OpenTelemetry collector over OTLP/HTTP with JSON bodies (otlp_json.hpp), the way
// OpenTelemetry's batch span processor does it: a bounded queue (max_queue spans; a span that
// does not fit is dropped and counted), batches of up to max_batch spans sent every
// schedule_delay or as soon as a batch is full, one request at a time, on a thread, an
// io_context and a connection of its own. export_spans() never waits for the network: a
// collector that is slow, answers 503 or never answers costs the run the copy into the queue,
// and its spans are dropped (counted in span_figures: /metrics), never retried. After a failed
// export the collector is left alone for a backoff (1 s, doubling to 30 s): meanwhile nothing is
// queued or made (accepting() is false) and the spans waiting are dropped, so a collector that is
// down costs the run next to nothing.
#pragma once

#include "otlp_json.hpp"
#include "otlp_settings.hpp"

#include <dibs/http/client.hpp>
#include <dibs/http/url_template.hpp>
#include <dibs/tracing.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dibs::http {

class otlp_exporter final : public span_exporter {
 public:
  // Throws setting_error ("otlp_endpoint") when settings.url is no http(s) URL.
  otlp_exporter(otlp_settings settings, otlp_resource resource, tls_options tls = {});
  ~otlp_exporter() override;

  // Any thread; never blocks on the network.
  void export_spans(std::vector<span_record> spans) override;
  void count_in(span_figures& figures) override { figures_.store(&figures); }
  bool accepting() const override { return !full_.load(std::memory_order_relaxed) && !down(); }
  void dropped_now(std::size_t spans) override { (down() ? figures_.load()->dropped_down : figures_.load()->dropped_full) += spans; }

  // Sends what waits, for at most settings.shutdown_wait, then stops (an export still under way
  // then is cancelled; what is left is counted as dropped). Idempotent; the destructor calls it.
  void shutdown();
  // After shutdown: "traces: N span(s) exported to URL[, M dropped (...)]", the run's last word on them.
  std::string end_line() const;

  const span_figures& figures() const { return *figures_.load(); }

 private:
  // The collector failed the last export and its backoff has not passed.
  bool down() const;
  // After an export: a failure starts (or doubles) the backoff and drops what waits; a success ends it.
  void collector_answered(bool ok);
  awaitable<void> run();
  std::vector<span_record> take();  // up to max_batch spans from the queue
  awaitable<void> send(std::vector<span_record> batch);

  otlp_settings settings_;
  otlp_resource resource_;
  url_template url_;
  std::string target_;
  span_figures own_figures_;
  std::atomic<span_figures*> figures_{&own_figures_};

  std::mutex mutex_;  // guards queue_, ended_
  std::condition_variable ended_cv_;
  std::deque<span_record> queue_;
  bool ended_ = false;  // run() returned
  std::atomic<bool> full_{false};      // the queue is full (accepting())
  std::atomic<bool> woken_{false};     // a wake-up is posted and not yet seen
  std::atomic<bool> stopping_{false};  // send what waits, then end
  std::atomic<bool> abandon_{false};   // end now
  bool warned_ = false;                // the first failed export was logged (run()'s thread)
  std::atomic<std::int64_t> down_until_{0};  // steady clock, ns: the backoff's end (0: not down)
  std::chrono::milliseconds backoff_{0};     // run()'s thread

  net::io_context ioc_{1};
  net::steady_timer timer_{ioc_};
  net::cancellation_signal cancel_;
  std::unique_ptr<client> client_;
  std::thread thread_;
};

}  // namespace dibs::http
