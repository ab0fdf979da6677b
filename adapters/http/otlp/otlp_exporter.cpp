#include "otlp_exporter.hpp"

#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>

#include "engine/src/uri_redact.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace dibs::http {

namespace {
url_template otlp_endpoint_template(const std::string& url) {
  auto t = url_template::parse(url, "otlp_endpoint");
  if (!t.fields().empty()) throw setting_error("otlp_endpoint", "must be a URL without {placeholders}");
  return t;
}

client_options otlp_client_options(const otlp_settings& s, tls_options tls) {
  client_options o;
  o.connect_timeout = std::min(s.timeout, std::chrono::milliseconds{5'000});
  o.request_timeout = s.timeout;
  o.max_body = 64 << 10;  // the collector's answer: an ExportTraceServiceResponse
  o.tls = std::move(tls);
  o.adaptive = std::nullopt;  // one request at a time: no limit to learn
  return o;
}
}  // namespace

otlp_exporter::otlp_exporter(otlp_settings settings, otlp_resource resource, tls_options tls)
    : settings_(std::move(settings)), resource_(std::move(resource)), url_(otlp_endpoint_template(settings_.url)) {
  target_ = url_.expand(job{}).target;
  client_ = std::make_unique<client>(ioc_.get_executor(), otlp_client_options(settings_, std::move(tls)));
  auto body = run();  // named: g++ 12 and temporaries in co_spawn's arguments
  net::co_spawn(ioc_, std::move(body), net::bind_cancellation_slot(cancel_.slot(), [this](std::exception_ptr e) {
                  if (e) {
                    try {
                      std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                      log::warn("traces: the OTLP exporter stopped: ", ex.what());
                    }
                  }
                  std::lock_guard lock(mutex_);
                  ended_ = true;
                  ended_cv_.notify_all();
                }));
  thread_ = std::thread([this] { ioc_.run(); });
}

otlp_exporter::~otlp_exporter() { shutdown(); }

bool otlp_exporter::down() const {
  const auto until = down_until_.load(std::memory_order_relaxed);
  return until != 0 && std::chrono::steady_clock::now().time_since_epoch().count() < until;
}

void otlp_exporter::collector_answered(bool ok) {
  if (ok) {
    backoff_ = std::chrono::milliseconds{0};
    down_until_ = 0;
    return;
  }
  backoff_ = std::min(std::max(backoff_ * 2, std::chrono::milliseconds{1'000}), std::chrono::milliseconds{30'000});
  down_until_ = (std::chrono::steady_clock::now() + backoff_).time_since_epoch().count();
  std::size_t waiting = 0;
  {
    std::lock_guard lock(mutex_);
    waiting = queue_.size();
    queue_.clear();
    full_ = false;
  }
  figures_.load()->dropped_down += waiting;
}

void otlp_exporter::export_spans(std::vector<span_record> spans) {
  if (down()) {
    figures_.load()->dropped_down += spans.size();
    return;
  }
  std::size_t dropped = 0;
  bool full_batch = false;
  {
    std::lock_guard lock(mutex_);
    for (auto& s : spans) {
      if (queue_.size() >= settings_.max_queue || ended_) {
        ++dropped;
        continue;
      }
      queue_.push_back(std::move(s));
    }
    full_batch = queue_.size() >= settings_.max_batch;
    full_.store(queue_.size() >= settings_.max_queue, std::memory_order_relaxed);
  }
  if (dropped) figures_.load()->dropped_full += dropped;
  if (full_batch && !woken_.exchange(true)) net::post(ioc_, [this] { timer_.cancel(); });
}

std::vector<span_record> otlp_exporter::take() {
  std::vector<span_record> out;
  std::lock_guard lock(mutex_);
  const auto n = std::min(queue_.size(), settings_.max_batch);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  full_.store(queue_.size() >= settings_.max_queue, std::memory_order_relaxed);
  return out;
}

awaitable<void> otlp_exporter::run() {
  co_await net::this_coro::throw_if_cancelled(false);  // a cancelled export returns; abandon_ says why
  for (;;) {
    if (abandon_) co_return;
    bool full = false;
    bool empty = false;
    {
      std::lock_guard lock(mutex_);
      full = queue_.size() >= settings_.max_batch;
      empty = queue_.empty();
    }
    if (stopping_ && (empty || down())) co_return;  // at the end, a collector that is down is not waited for
    if (down()) {  // left alone until its backoff has passed
      timer_.expires_at(std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(down_until_.load())));
      co_await timer_.async_wait(net::as_tuple(net::use_awaitable));
      continue;
    }
    if (!full && !stopping_) {
      woken_ = false;
      timer_.expires_after(settings_.schedule_delay);
      co_await timer_.async_wait(net::as_tuple(net::use_awaitable));
    }
    while (!abandon_ && !down()) {
      auto batch = take();
      if (batch.empty()) break;
      co_await send(std::move(batch));
    }
  }
}

awaitable<void> otlp_exporter::send(std::vector<span_record> batch) {
  request req;
  req.method = request::verb::post;
  req.target = target_;
  req.body = otlp_trace_request_json(resource_, batch);
  req.content_type = "application/json";
  req.headers = settings_.headers;
  auto to = url_.origin();
  auto r = co_await client_->send(std::move(to), std::move(req));
  auto& f = *figures_.load();
  if (!r.ec && r.status >= 200 && r.status < 300) {
    f.exported += batch.size();
    collector_answered(true);
    co_return;
  }
  f.dropped_failed += batch.size();
  ++f.exports_failed;
  if (!abandon_) collector_answered(false);
  if (!warned_) {
    warned_ = true;  // once: a collector that is down would say so every second
    log::warn("traces: an export to the OTLP collector failed (", abandon_ ? "cancelled at the run's end" : r.describe(),
              "): its ", batch.size(), " span(s) dropped, and none is made for ", backoff_.count(),
              " ms (doubling to 30 s while it fails); the drops are counted in /metrics (dibs_trace_spans_dropped_total)");
  }
}

void otlp_exporter::shutdown() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  net::post(ioc_, [this] { timer_.cancel(); });
  {
    std::unique_lock lock(mutex_);
    if (!ended_cv_.wait_for(lock, settings_.shutdown_wait, [this] { return ended_; })) {
      abandon_ = true;
      net::post(ioc_, [this] {
        cancel_.emit(net::cancellation_type::terminal);
        timer_.cancel();
      });
    }
  }
  thread_.join();
  std::size_t left = 0;
  {
    std::lock_guard lock(mutex_);
    left = queue_.size();
    queue_.clear();
  }
  auto& f = *figures_.load();
  f.dropped_failed += left;
  client_.reset();
}

std::string otlp_exporter::end_line() const {
  const auto& f = *figures_.load();
  std::string line = "traces: " + std::to_string(f.exported.load()) + " span(s) exported to " + redact_api_url(settings_.url);
  const auto dropped = f.dropped_full.load() + f.dropped_failed.load() + f.dropped_down.load();
  if (dropped > 0)
    line += ", " + std::to_string(dropped) + " dropped (" + std::to_string(f.dropped_full.load()) + " with the queue full, " +
            std::to_string(f.dropped_failed.load()) + " not accepted by the collector or left at the end, " +
            std::to_string(f.dropped_down.load()) + " while it was down)";
  return line;
}

}  // namespace dibs::http
