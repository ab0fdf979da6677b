#include <dibs/http/exchange_policy.hpp>

#include "adapters/http/processor/api_body.hpp"
#include "adapters/http/rate/provider_headers.hpp"
#include "adapters/http/rate/quota_headers.hpp"
#include "adapters/http/rate/shared_rate.hpp"
#include "adapters/http/rate/token_meter.hpp"

#include <dibs/log.hpp>

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
// A slot of the rate shared through the store: waits for it, and tells whether it may be used
// (false: the store could not be asked, or the host is paused now; ask for another). `waited`:
// set when the slot's time was later than now.
awaitable<bool> shared_slot(shared_rate& shared, rate_limiter& limiter, const std::string& host, bool& waited) {
  const auto t = co_await shared.next();
  if (t.paused_until > rate_limiter::clock::now()) limiter.pause_here(host, t.paused_until);
  if (t.at > rate_limiter::clock::now()) {
    waited = true;
    net::steady_timer timer(co_await net::this_coro::executor, t.at);
    co_await timer.async_wait(net::use_awaitable);
  }
  if (!t.granted) co_return false;
  if (t.recheck) {
    // This block waited behind other processes' blocks: one of them may have paused the host.
    const auto p = co_await shared.paused_until();
    if (p > rate_limiter::clock::now()) limiter.pause_here(host, p);
  }
  co_return limiter.paused_until(host) <= rate_limiter::clock::now();
}
}  // namespace

awaitable<bool> wait_for_slot(rate_limiter& limiter, const std::string& host) {
  bool waited = false;
  for (;;) {
    // Held across the wait: when this coroutine is cancelled, the slot goes back to the limiter.
    auto slot = limiter.take(host);
    bool again = false;
    // In steps of at most a second: a rate changed meanwhile (POST /rate) makes this slot stale,
    // and it is given back and a new one taken at the new rate.
    while (!again && slot.at() > rate_limiter::clock::now()) {
      waited = true;
      net::steady_timer timer(co_await net::this_coro::executor,
                              std::min(slot.at(), rate_limiter::clock::now() + std::chrono::seconds(1)));
      co_await timer.async_wait(net::use_awaitable);
      // The host said stop meanwhile: this slot is given back, and a later one taken.
      // A newer quota reading withdrew the times handed out before it: a new one, by the new reading.
      again = limiter.paused_until(host) > rate_limiter::clock::now() || slot.generation() != limiter.generation() ||
              slot.quota_epoch() != limiter.quota_epoch();
    }
    if (again) continue;
    if (auto* shared = limiter.shared())
      if (!co_await shared_slot(*shared, limiter, host, waited)) continue;
    slot.use();
    co_return waited;
  }
}

namespace {
// The quota an answer states paces the host from then on (rate_limiter::follow_quota); a quota
// that asks for more than max_wait between requests is said once per host.
void follow_quota(rate_limiter& limiter, const std::string& host, const response& r, std::chrono::milliseconds max_wait,
                  std::chrono::steady_clock::time_point sent) {
  if (sent == std::chrono::steady_clock::time_point{}) sent = std::chrono::steady_clock::now();
  if (!limiter.follow_quota(host, r.headers, sent, max_wait)) return;
  log::warn("API host ", host, "'s quota headers ask for longer than the longest wait allowed (max_retry_after, ",
            std::chrono::duration_cast<std::chrono::seconds>(max_wait).count(),
            " s) between requests: requests go at most that far apart, and the API may refuse some");
}
}  // namespace

std::chrono::milliseconds honor_stop_signals(rate_limiter& limiter, const std::string& host, const response& r,
                                             std::chrono::milliseconds max_wait, http_figures* figures, bool paced,
                                             std::chrono::steady_clock::time_point sent, bool* api_pace) {
  if (r.ec) return std::chrono::milliseconds{0};
  follow_quota(limiter, host, r, max_wait, sent);
  // Gemini says how long in its 429's body, not in a header; OpenAI's message says it too.
  const auto body_delay = r.status == 429 ? body_retry_delay(r.body) : std::nullopt;
  if (paced && r.status == 429 && !body_delay && !says_when_to_return(r.status, r.headers)) return std::chrono::milliseconds{0};
  const auto now = std::chrono::system_clock::now();
  auto until = stop_until_from_headers(r.status, r.headers, now, limiter.tokens().active());
  if (!until && body_delay) until = now + std::chrono::duration_cast<std::chrono::system_clock::duration>(*body_delay);
  if (!until) return std::chrono::milliseconds{0};
  // The API's own pause (not the guessed second of a bare 429), until cut short below.
  if (api_pace) *api_pace = body_delay || says_when_to_return(r.status, r.headers);
  auto stop_for = std::chrono::duration_cast<std::chrono::milliseconds>(*until - now);
  if (stop_for > max_wait) {
    const auto asked = std::chrono::duration_cast<std::chrono::seconds>(stop_for).count();
    log::warn("API host ", host, " said to wait ", asked, " s (HTTP ", r.status,
              r.header("Retry-After").empty() ? "" : ", Retry-After: " + r.header("Retry-After"),
              r.header("X-Ttl").empty() ? "" : ", X-Ttl: " + r.header("X-Ttl"), "); waiting the longest allowed (max_retry_after), ",
              std::chrono::duration_cast<std::chrono::seconds>(max_wait).count(), " s, instead");
    stop_for = max_wait;
    if (api_pace) *api_pace = false;
  }
  limiter.pause(host, rate_limiter::clock::now() + stop_for);
  if (figures && stop_for.count() > 0) figures->api_stops.fetch_add(1, std::memory_order_relaxed);
  return stop_for;
}

bool pause_speaks_of_speed(const response& r, bool api_pace, bool metered) {
  if (r.ec || !api_pace || r.status != 429 || metered) return false;
  // Retry-After (or OpenAI's retry-after-ms): when the calls may go again, a token bucket's word.
  // A quota's headers (ip-api's X-Rl: 0 with X-Ttl, RateLimit-Remaining: 0 with its reset) say
  // when an allowance comes back instead: nothing of speed, whatever else the answer carries.
  if (r.header("Retry-After").empty() && r.header("retry-after-ms").empty()) return false;
  if (r.header("X-Rl") == "0") return false;
  const auto quota = read_quota(r.headers, std::chrono::system_clock::now());
  return !(quota && quota->remaining <= 0);
}

void tell_limit_of_pause(client& c, const origin& to, const response& r, std::chrono::milliseconds stop_for, bool api_pace,
                         bool metered, std::chrono::steady_clock::time_point sent) {
  if (!pause_speaks_of_speed(r, api_pace, metered)) return;
  c.api_paused(to, r.status, stop_for,
               std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - sent));
}

void count_exchange(http_figures* figures, const response& r, std::chrono::steady_clock::time_point sent) {
  if (!figures) return;
  figures->count(r.ec ? 0 : r.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
}

std::optional<outcome> judge_exchange(const response& r, const client_options& http, std::chrono::milliseconds backoff,
                                      std::chrono::milliseconds stop_for, bool api_pace) {
  if (r.ec) {
    if (r.ec == boost::beast::http::error::body_limit)
      return outcome::fail("response body larger than " + std::to_string(http.max_body) + " bytes");
    // No answer at all (refused, unresolvable, reset, timed out): about the API, not the item.
    if (r.ec == boost::beast::error::timeout)
      return outcome::unavailable(backoff, r.stage + ": timed out (connect " + std::to_string(http.connect_timeout.count()) +
                                               " ms, request " + std::to_string(http.request_timeout.count()) + " ms)");
    return outcome::unavailable(backoff, r.describe());
  }
  const int status = r.status;
  if (status >= 200 && status < 300) return std::nullopt;
  // The status line and the API's own words: "HTTP 404 Not Found: no location known for this address".
  const auto said = with_api_message(r.describe(), r.body);
  // 5xx: the API's outage, the circuit breaker's to judge. Anthropic's 529 "overloaded" that says
  // when to come back is its capacity, never the item's doing: counted by the breaker, no attempt
  // spent. A bare one spends it, as a bare 429 does: an API that answers 529 for good still ends
  // the run.
  if (status == 529 && api_pace) {
    auto o = outcome::unavailable(std::max(backoff, stop_for), said, status);
    o.paced = true;
    return o;
  }
  if (status >= 500) return outcome::unavailable(std::max(backoff, stop_for), said, status);
  // A 429 that says when to come back (Retry-After, retry-after-ms, a quota's reset, Gemini's
  // RetryInfo, OpenAI's "try again in"): the API's pace, no fault of the item's, no attempt spent. A bare 429 says
  // nothing of when: it spends the attempt, so an API that refuses for good still ends the run.
  if (status == 429) {
    // A request larger than the whole token limit: no wait makes it fit, and each try is refused.
    if (never_fits_the_limit(r.body)) return outcome::fail(said, status);
    if (api_pace) return outcome::paced_retry(std::max(backoff, stop_for), said, status);
    return outcome::retry(std::max(backoff, stop_for), said, status);
  }
  if (status == 408) return outcome::retry(std::max(backoff, stop_for), said, status);  // slow down
  return outcome::fail(said, status);
}

}  // namespace dibs::http
