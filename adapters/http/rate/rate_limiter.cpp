#include <dibs/http/rate_limiter.hpp>

#include "provider_headers.hpp"
#include "quota_headers.hpp"
#include "quota_pacer.hpp"
#include "shared_rate.hpp"
#include "token_meter.hpp"

#include <dibs/setting_error.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <strings.h>
#include <thread>
#include <utility>

namespace dibs::http {

std::optional<double> parse_rate(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string number = text.substr(0, slash), unit = text.substr(slash + 1);
  char* end = nullptr;
  const double n = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !(n > 0) || n > 1e9) return std::nullopt;
  if (unit == "s" || unit == "sec" || unit == "second") return n;
  if (unit == "min" || unit == "m" || unit == "minute") return n / 60.0;
  if (unit == "h" || unit == "hour") return n / 3600.0;
  return std::nullopt;
}

namespace {
std::string header(const std::vector<std::pair<std::string, std::string>>& headers, const char* name) {
  for (const auto& [k, v] : headers)
    if (::strcasecmp(k.c_str(), name) == 0) return v;
  return {};
}
// A number of seconds, saturated at about 31 years (10^9 s) so that adding it to a time point
// never overflows; the caller caps it far lower (max_retry_after).
std::optional<long long> seconds_value(const std::string& v) {
  if (v.empty() || v.size() > 18 || !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::min(std::atoll(v.c_str()), 1'000'000'000LL);
}
}  // namespace

std::optional<std::chrono::system_clock::time_point> stop_until_from_headers(
    int status, const std::vector<std::pair<std::string, std::string>>& headers, std::chrono::system_clock::time_point now,
    bool tokens_metered) {
  using std::chrono::seconds;
  std::optional<std::chrono::system_clock::time_point> until;
  auto later = [&](std::chrono::system_clock::time_point t) {
    if (!until || t > *until) until = t;
  };
  // ip-api: X-Rl is what is left of this window, X-Ttl the seconds until it resets.
  if (auto rl = seconds_value(header(headers, "X-Rl")); rl && *rl == 0)
    later(now + seconds(seconds_value(header(headers, "X-Ttl")).value_or(60)));
  const auto none_left_until = [&](std::chrono::milliseconds reset_in) {
    later(now + (reset_in.count() > 0 ? std::chrono::duration_cast<std::chrono::system_clock::duration>(reset_in)
                                      : std::chrono::system_clock::duration(seconds(1))));
  };
  // The quota headers (the IETF drafts', GitHub's X-RateLimit-*, the LLM providers' requests):
  // none left until the reset.
  if (auto q = read_quota(headers, now); q && q->remaining <= 0) none_left_until(q->reset_in);
  // An LLM provider's tokens (OpenAI's, Azure's, Anthropic's): none left until their reset.
  if (!tokens_metered)
    if (const auto tokens = read_provider_limits(headers, now).tokens; tokens && tokens->remaining <= 0)
      none_left_until(tokens->reset_in);
  if (status == 429 || status == 503 || status == 529) {  // 529: Anthropic's "overloaded"
    const auto ra = header(headers, "Retry-After");
    if (const auto ms = retry_after_ms(headers)) {  // OpenAI's and Azure's, to the millisecond
      later(now + std::chrono::duration_cast<std::chrono::system_clock::duration>(*ms));
    } else if (auto s = seconds_value(ra)) {
      later(now + seconds(*s));
    } else if (auto t = http_date(ra)) {
      // Relative to the server's own Date when it sent one, so clock skew doesn't stretch it.
      auto base = http_date(header(headers, "Date"));
      const auto wait = *t - (base ? *base : std::chrono::system_clock::to_time_t(now));
      later(now + seconds(std::clamp<std::time_t>(wait, 0, 1'000'000'000)));
    } else if (status == 429 && !until) {
      later(now + seconds(1));  // a bare 429: back off a little for everyone
    }
  }
  return until;
}

bool says_when_to_return(int status, const std::vector<std::pair<std::string, std::string>>& headers) {
  // Read as a 503 is: the same headers, and no guess when there are none.
  return stop_until_from_headers(status == 429 ? 503 : status, headers, std::chrono::system_clock::now()).has_value();
}

struct rate_limiter::quota_book {
  std::unordered_map<std::string, quota_pacer> hosts;
};

rate_limiter::rate_limiter(double per_second, double burst)
    : burst_(burst), quota_(std::make_unique<quota_book>()), tokens_(std::make_unique<token_meter>()) {
  apply_rate(per_second);
}

rate_limiter::~rate_limiter() = default;

void rate_limiter::apply_rate(double per_second) {
  per_second_.store(per_second > 0 ? per_second : 0, std::memory_order_relaxed);
  interval_ = tolerance_ = clock::duration::zero();
  if (per_second > 0) {
    interval_ = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / per_second));
    tolerance_ = std::chrono::duration_cast<clock::duration>(interval_ * std::max(0.0, burst_ - 1.0));
  }
}

void rate_limiter::set_per_second(double per_second) {
  // The store's record holds the rate every process shares; one process changing its own would
  // only look changed (a raise would do nothing, a cut would slow this process alone).
  if (shared_)
    throw std::invalid_argument("the rate is shared through the store (" + setting_name("rate_scope") +
                                " store): restart the processes with the new " + setting_name("rate"));
  std::lock_guard lock(mutex_);
  apply_rate(per_second);
  tat_ = clock::now();
  returned_.clear();
  generation_.fetch_add(1, std::memory_order_release);
}

rate_limiter::slot& rate_limiter::slot::operator=(slot&& o) noexcept {
  if (this != &o) {
    give_back();
    owner_ = std::exchange(o.owner_, nullptr);
    at_ = o.at_;
    tat_after_ = o.tat_after_;
    generation_ = o.generation_;
    quota_epoch_ = o.quota_epoch_;
  }
  return *this;
}

void rate_limiter::slot::give_back() {
  if (auto* l = std::exchange(owner_, nullptr)) l->give_back(*this);
}

rate_limiter::slot rate_limiter::take(const std::string& host) {
  slot s;
  const auto now = clock::now();
  // Shared through the store, own is 0: the store's schedule replaces this process's (reserve()).
  const double own = per_second_.load(std::memory_order_relaxed);
  if (own <= 0 && now.time_since_epoch().count() >= any_paused_until_.load(std::memory_order_relaxed) &&
      !any_quota_.load(std::memory_order_relaxed)) {
    s.at_ = now;
    s.generation_ = generation();
    s.quota_epoch_ = quota_epoch();
    return s;
  }
  std::lock_guard lock(mutex_);
  s.generation_ = generation();
  s.quota_epoch_ = quota_epoch();
  auto at = now;
  if (auto p = paused_.find(host); p != paused_.end()) at = std::max(at, p->second);
  // The quota's time last: it books the request in the window it will be sent in.
  auto quota_time = [&](clock::time_point t) {
    auto q = quota_->hosts.find(host);
    return q == quota_->hosts.end() ? t : q->second.take(t, now);
  };
  if (own > 0) {
    returned_.erase(returned_.begin(), returned_.lower_bound(now));  // their time is past
    // A slot given back, at or after the earliest time this host may be sent to, when it
    // comes before the schedule's next one.
    const auto next = std::max(at, std::max(tat_, at) - tolerance_);
    if (auto r = returned_.lower_bound(at); r != returned_.end() && *r <= next) {
      s.at_ = quota_time(*r);
      returned_.erase(r);
    } else {
      // GCRA: the request may go at tat - tolerance; the next one is due an interval later.
      tat_ = std::max(tat_, at);
      s.at_ = quota_time(next);
      tat_ += interval_;
      s.tat_after_ = tat_;
    }
    s.owner_ = this;
  } else {
    s.at_ = quota_time(at);
  }
  return s;
}

rate_limiter::clock::time_point rate_limiter::reserve(const std::string& host) {
  auto s = take(host);
  s.use();
  if (!shared_) return s.at();
  for (;;) {
    const auto t = shared_->next_blocking();
    if (t.paused_until > clock::now()) pause_here(host, t.paused_until);
    if (t.granted) return std::max({s.at(), t.at, paused_until(host)});
    std::this_thread::sleep_until(t.at);  // the store could not be asked: nothing goes out
  }
}

double rate_limiter::per_second() const {
  return shared_ ? shared_->per_second() : per_second_.load(std::memory_order_relaxed);
}

void rate_limiter::share(std::shared_ptr<shared_rate> s) {
  shared_ = std::move(s);
  if (shared_) per_second_ = 0;  // the store's schedule replaces this process's own
}

void rate_limiter::give_back(const slot& s) {
  std::lock_guard lock(mutex_);
  const auto now = clock::now();
  if (s.at_ <= now) return;  // its time has come: the rate was not used then, and that is past
  if (s.generation_ != generation()) return;  // taken under another rate: that schedule is gone
  if (s.tat_after_ == tat_) {
    // The latest slot: the schedule simply moves back one interval (never below now).
    tat_ = std::max(now, tat_ - interval_);
  } else {
    returned_.insert(s.at_);
  }
}

void rate_limiter::pause(const std::string& host, clock::time_point until) {
  pause_here(host, until);
  if (shared_) shared_->pause(until);
}

void rate_limiter::pause_here(const std::string& host, clock::time_point until) {
  std::lock_guard lock(mutex_);
  auto& p = paused_[host];
  p = std::max(p, until);
  if (until.time_since_epoch().count() > any_paused_until_.load(std::memory_order_relaxed))
    any_paused_until_.store(until.time_since_epoch().count(), std::memory_order_relaxed);  // under the mutex
}

bool rate_limiter::follow_quota(const std::string& host, const std::vector<std::pair<std::string, std::string>>& headers,
                                clock::time_point sent, std::chrono::milliseconds max_wait) {
  const auto q = read_quota(headers, std::chrono::system_clock::now());
  if (!q || q->reset_in.count() <= 0) return false;
  std::lock_guard lock(mutex_);
  auto [it, fresh] = quota_->hosts.try_emplace(host, max_wait);  // a pacer made only for a new host
  auto& pacer = it->second;
  const auto epoch = pacer.epoch();
  const auto now = clock::now();
  pacer.read(*q, sent, now);
  if (pacer.epoch() != epoch) quota_epoch_.fetch_add(1, std::memory_order_acq_rel);
  any_quota_.store(true, std::memory_order_relaxed);
  // Would the next request wait longer than allowed? (The window's requests spread over more time
  // than max_retry_after: each is held that long at most, and the API may refuse some.)
  const bool capped = pacer.per_window() > 0 && pacer.window() / pacer.per_window() > max_wait;
  return capped && pacer.first_capped();
}

rate_limiter::clock::time_point rate_limiter::paused_until(const std::string& host) const {
  if (clock::now().time_since_epoch().count() >= any_paused_until_.load(std::memory_order_relaxed)) return {};
  std::lock_guard lock(mutex_);
  auto p = paused_.find(host);
  return p == paused_.end() ? clock::time_point{} : p->second;
}

}  // namespace dibs::http
