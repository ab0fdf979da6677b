// The quota pacer against a simulated API that counts requests in fixed windows as it receives
// them and says what is left in every answer (X-RateLimit-* read to a quota_reading): requests
// taken by a pool of callers, sent at their times, received after a network delay, answered after
// a latency; each answer's reading goes back to the pacer. The first request goes alone, as dibs's
// pre-flight does, and the other callers start once it is answered. Every run is deterministic (a seeded
// generator); time is simulated, so these tests take no time of their own.
#include "adapters/http/rate/quota_pacer.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <vector>

using namespace dibs::http;
using clock_type = quota_pacer::clock;
using std::chrono::milliseconds;

namespace {

struct api_shape {
  int limit = 50;
  milliseconds window{1000};
  milliseconds phase{0};           // windows end at t0 + phase + k * window
  milliseconds latency_min{10}, latency_max{10};
  milliseconds network_max{2};     // a request reaches the API this long after it is sent, at most
  bool exact = true;               // the reset read to the millisecond (an epoch), else whole seconds rounded up
  bool says_limit = true;
};

struct run_figures {
  int sent = 0, refused = 0, accepted = 0;
  double seconds = 0;  // from the first request's arrival to the last's
  double accepted_per_window() const { return seconds > 0 ? accepted / seconds : 0; }
};

// `items` requests by `callers` callers at once; returns what the API saw.
run_figures simulate(const api_shape& api, int items, int callers, std::uint64_t seed,
                     milliseconds max_wait = milliseconds(60'000)) {
  const auto t0 = clock_type::time_point{} + std::chrono::hours(1000);
  std::mt19937_64 rng(seed);
  auto draw = [&](milliseconds lo, milliseconds hi) {
    std::uniform_int_distribution<std::int64_t> d(std::chrono::duration_cast<std::chrono::microseconds>(lo).count(),
                                                  std::chrono::duration_cast<std::chrono::microseconds>(hi).count());
    return std::chrono::microseconds(d(rng));
  };
  quota_pacer pacer(max_wait);
  std::map<std::int64_t, int> counted;  // window index -> requests the API counted in it
  auto window_of = [&](clock_type::time_point t) {
    return static_cast<std::int64_t>(std::floor(std::chrono::duration<double>(t - t0 - api.phase).count() /
                                                std::chrono::duration<double>(api.window).count()));
  };
  auto end_of = [&](std::int64_t k) { return t0 + api.phase + (k + 1) * api.window; };

  enum class what { take, send, arrive, answer };
  struct event {
    clock_type::time_point at;
    what w;
    int caller;
    clock_type::time_point sent;
    std::uint64_t epoch;
    int remaining;
    clock_type::time_point end;
    bool operator>(const event& o) const { return at > o.at; }
  };
  std::priority_queue<event, std::vector<event>, std::greater<>> events;
  events.push({t0, what::take, 0, {}, 0, 0, {}});  // the pre-flight
  run_figures f;
  int started = 0;
  clock_type::time_point first{}, last{};
  while (!events.empty()) {
    auto e = events.top();
    events.pop();
    switch (e.w) {
      case what::take: {
        if (started == items) break;
        ++started;
        const auto t = pacer.take(e.at, e.at);
        events.push({t, what::send, e.caller, {}, pacer.epoch(), 0, {}});
        break;
      }
      case what::send:
        if (e.epoch != pacer.epoch()) {  // withdrawn meanwhile: a new time (wait_for_slot's check)
          const auto t = pacer.take(e.at, e.at);
          events.push({t, what::send, e.caller, {}, pacer.epoch(), 0, {}});
          break;
        }
        ++f.sent;
        events.push({e.at + draw(milliseconds(0), api.network_max), what::arrive, e.caller, e.at, 0, 0, {}});
        break;
      case what::arrive: {
        const auto k = window_of(e.at);
        auto& n = counted[k];
        if (n < api.limit) {
          ++n;
          ++f.accepted;
          if (first == clock_type::time_point{}) first = e.at;
          last = e.at;
        } else {
          ++f.refused;
        }
        events.push({e.at + draw(api.latency_min, api.latency_max), what::answer, e.caller, e.sent, 0, api.limit - n, end_of(k)});
        break;
      }
      case what::answer: {
        quota_reading q;
        if (api.says_limit) q.limit = api.limit;
        q.remaining = e.remaining;
        const auto left = std::chrono::duration_cast<milliseconds>(e.end - e.at);
        q.reset_in = api.exact ? left : std::chrono::ceil<std::chrono::seconds>(left);
        q.exact = api.exact;
        pacer.read(q, e.sent, e.at);
        events.push({e.at, what::take, e.caller, {}, 0, 0, {}});
        if (f.sent == 1)
          for (int c = 1; c < callers; ++c) events.push({e.at, what::take, c, {}, 0, 0, {}});
        break;
      }
    }
  }
  f.seconds = std::chrono::duration<double>(last - first).count() / std::chrono::duration<double>(api.window).count();
  return f;
}

}  // namespace

TEST_CASE("50 a 1 s window, answers in 10 ms or 50 ms or anywhere in 0-100 ms: no 429, at least 0.9 of the quota",
          "[quota][pacer]") {
  for (const auto& [lo, hi] : std::vector<std::pair<int, int>>{{10, 10}, {50, 50}, {0, 100}, {10, 50}}) {
    for (int callers : {4, 64}) {
      api_shape api;
      api.latency_min = milliseconds(lo);
      api.latency_max = milliseconds(hi);
      api.phase = milliseconds(370);
      const auto f = simulate(api, 2000, callers, 7 + lo + callers);
      INFO("latency " << lo << "-" << hi << " ms, " << callers << " callers: " << f.refused << " of " << f.sent
                      << " refused, " << f.accepted_per_window() << " a window");
      CHECK(f.refused * 100 <= f.sent);  // at most 1%
      CHECK(f.refused == 0);             // the aim
      CHECK(f.accepted_per_window() >= 45.0);
      CHECK(f.accepted == 2000);
    }
  }
}

TEST_CASE("a whole-second reset from now and no Limit header still hold the window", "[quota][pacer]") {
  api_shape api;
  api.exact = false;
  api.says_limit = false;
  api.latency_min = milliseconds(10);
  api.latency_max = milliseconds(50);
  const auto f = simulate(api, 1000, 32, 3);
  INFO(f.refused << " of " << f.sent << " refused, " << f.accepted_per_window() << " a window");
  CHECK(f.refused * 100 <= f.sent);
  CHECK(f.accepted_per_window() >= 40.0);
}

TEST_CASE("a long window learned from two readings, a minute of 600", "[quota][pacer]") {
  api_shape api;
  api.limit = 600;
  api.window = milliseconds(60'000);
  api.phase = milliseconds(45'000);  // the first reading says 45 s left
  api.latency_min = milliseconds(5);
  api.latency_max = milliseconds(80);
  const auto f = simulate(api, 3000, 64, 11);
  INFO(f.refused << " of " << f.sent << " refused, " << f.accepted_per_window() << " a window");
  CHECK(f.refused * 100 <= f.sent);
  CHECK(f.accepted_per_window() >= 0.9 * 600);
}

TEST_CASE("a quota that asks for a day between requests is held to max_wait", "[quota][pacer]") {
  quota_pacer pacer(milliseconds(30'000));
  const auto t = clock_type::time_point{} + std::chrono::hours(1000);
  // X-RateLimit-Remaining: 2, X-RateLimit-Reset: a day from now.
  pacer.read({100, 2, milliseconds(86'400'000), std::nullopt, true}, t, t);
  const auto a = pacer.take(t, t);
  const auto b = pacer.take(t, t);
  const auto c = pacer.take(t, t);
  CHECK(a == t);
  CHECK(b - a <= milliseconds(30'000));
  CHECK(c - b <= milliseconds(30'000));
  CHECK(c > b);
  // A reset or a window as long as a server may say (10^15 s): bounded before any sum, no overflow.
  quota_pacer huge(milliseconds(30'000));
  huge.read({100, 1, milliseconds(1'000'000'000'000'000'000LL), milliseconds(1'000'000'000'000'000'000LL), true}, t, t);
  const auto h0 = huge.take(t, t);
  CHECK(huge.take(t, t) - h0 <= milliseconds(30'000));
  // Remaining 0 and a far reset: the same cap, no overflow.
  quota_pacer none(milliseconds(30'000));
  none.read({100, 0, milliseconds(86'400'000LL * 365 * 11), std::nullopt, true}, t, t);
  CHECK(none.take(t, t) == t + milliseconds(30'000));
}

TEST_CASE("the newest reading wins over times handed out: withdrawn when the window has no room for them",
          "[quota][pacer]") {
  quota_pacer pacer;
  const auto t = clock_type::time_point{} + std::chrono::hours(1000);
  pacer.read({100, 100, milliseconds(1000), milliseconds(1000), true}, t, t);
  std::vector<clock_type::time_point> times;
  for (int i = 0; i < 40; ++i) times.push_back(pacer.take(t, t));
  CHECK(times.back() < t + milliseconds(1000));  // 40 of the 95 of this window
  const auto before = pacer.epoch();
  // Another client took most of the window: 5 left, as the API says 1 ms later.
  pacer.read({100, 5, milliseconds(999), milliseconds(1000), true}, t, t + milliseconds(1));
  CHECK(pacer.epoch() != before);  // the times handed out beyond it are withdrawn
  // What is taken now: 5 more in this window at most (one of the 40 went out at t), then the next.
  int in_this_window = 0;
  for (int i = 0; i < 10; ++i)
    if (pacer.take(t + milliseconds(1), t + milliseconds(1)) < t + milliseconds(1000)) ++in_this_window;
  CHECK(in_this_window <= 5);
}
