#include "http_processor.hpp"

#include "json_check.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>

namespace dibs::http {

std::chrono::milliseconds full_jitter_backoff(int attempt, std::chrono::milliseconds base,
                                              std::chrono::milliseconds max, std::mt19937_64& rng) {
  const int shift = std::clamp(attempt - 1, 0, 30);
  const auto cap = std::min<std::int64_t>(max.count(), base.count() << std::min(shift, 20));
  if (cap <= 0) return std::chrono::milliseconds{0};
  std::uniform_int_distribution<std::int64_t> pick(0, cap);
  return std::chrono::milliseconds{pick(rng)};
}

namespace {
// Every processor honors the API's stop signals, so it always has a limiter (without a rate).
std::shared_ptr<const processor_options> with_limiter(processor_options o) {
  o.limiter = std::make_shared<rate_limiter>();
  return std::make_shared<const processor_options>(std::move(o));
}
}  // namespace

struct http_processor::json_parser {
  simdjson::ondemand::parser parser;
};

http_processor::http_processor(net::any_io_executor ex, std::shared_ptr<const processor_options> opts)
    : opts_(opts->limiter ? std::move(opts) : with_limiter(*opts)),
      client_(std::move(ex), opts_->http),
      parser_(std::make_unique<json_parser>()),
      rng_(std::random_device{}()) {}

http_processor::~http_processor() = default;

awaitable<outcome> http_processor::process(job j) {
  auto target = opts_->url.expand(j);
  if (!target.error.empty()) co_return outcome::fail(target.error);
  const std::string& host = opts_->url.host();
  auto& limiter = *opts_->limiter;
  // Wait for a slot; a stop that the API announced while we waited is waited out too.
  for (auto at = limiter.reserve(host); at > rate_limiter::clock::now(); at = limiter.reserve(host)) {
    net::steady_timer timer(co_await net::this_coro::executor, at);
    co_await timer.async_wait(net::use_awaitable);  // cancelled at shutdown: the item is released
    if (limiter.paused_until(host) <= rate_limiter::clock::now()) break;
  }
  std::string h = host;  // named: no temporaries inside a co_await (g++ 12)
  auto r = co_await client_.get(std::move(h), opts_->url.port(), std::move(target.target));
  // One reading of the API's stop signals serves both the shared pause and this item's retry.
  std::chrono::milliseconds stop_for{0};
  if (!r.ec) {
    const auto now = std::chrono::system_clock::now();
    if (auto until = stop_until_from_headers(r.status, r.headers, now)) {
      stop_for = std::chrono::duration_cast<std::chrono::milliseconds>(*until - now);
      limiter.pause(host, rate_limiter::clock::now() + stop_for);
    }
  }
  co_return judge(j, std::move(r), stop_for);
}

outcome http_processor::judge(const job& j, response r, std::chrono::milliseconds stop_for) {
  auto backoff = [&] { return full_jitter_backoff(j.attempts, opts_->backoff_base, opts_->backoff_max, rng_); };

  if (r.ec) {
    if (r.ec == boost::beast::http::error::body_limit)
      return outcome::fail("response body larger than " + std::to_string(opts_->http.max_body) + " bytes");
    if (r.ec == boost::beast::error::timeout)
      return outcome::retry(backoff(), r.stage + ": timed out (connect " +
                                           std::to_string(opts_->http.connect_timeout.count()) + " ms, request " +
                                           std::to_string(opts_->http.request_timeout.count()) + " ms)");
    return outcome::retry(backoff(), r.describe());
  }

  const int status = r.status;
  if (status >= 200 && status < 300) {
    auto check = check_json_object(parser_->parser, r.body);
    if (!check.ok) return outcome::retry(backoff(), r.describe() + " with a bad body: " + check.error, status);
    if (opts_->status_field_check && check.status == "fail")
      return outcome::fail("the API has no data: " + (check.message.empty() ? "status fail" : check.message),
                           status);
    while (!r.body.empty() && (r.body.back() == '\n' || r.body.back() == '\r' || r.body.back() == ' '))
      r.body.pop_back();
    return outcome::done(std::move(r.body));
  }
  if (status == 408 || status == 429 || status >= 500)
    return outcome::retry(std::max(backoff(), stop_for), r.describe(), status);  // never before the API allows
  return outcome::fail(r.describe(), status);
}

processor_factory make_http_processor_factory(processor_options opts) {
  if (!opts.limiter) opts.limiter = std::make_shared<rate_limiter>();
  auto shared = std::make_shared<const processor_options>(std::move(opts));
  return [shared](const shard_info& s) -> std::unique_ptr<processor> {
    return std::make_unique<http_processor>(s.executor, shared);
  };
}

}  // namespace dibs::http
