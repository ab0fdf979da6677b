#include "sim/api_sim.hpp"

#include "adapters/http/client/connect_window.hpp"
#include "adapters/http/client/limit_signals.hpp"
#include "adapters/http/client/straggler_watch.hpp"
#include "adapters/http/client/tcp_signals.hpp"
#include <dibs/http/origin_limits.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <queue>
#include <random>
#include <cstdio>
#include <cstdlib>

namespace dibs::sim {

namespace {

using clock_type = std::chrono::steady_clock;

struct call {
  std::size_t item = 0;
  double sent = 0;          // when it left the client (written)
  double hold_ms = 0;       // the worker time it needs
  bool counted = false;     // holds a permit of the limit
  bool straggler = false;   // ran beside the limit
  bool answered = false;
  bool unproven = false;    // on a new connection not proven yet (holds a slot of the window)
  bool waited_window = false;  // it waited for the connect window
  bool waited_pace = false;    // it waited for the pace
  bool opening = false;        // its new connection is in its TLS handshake (or before)
  bool first_on_connection = false;  // sent on a new connection (http::unserved_connection) ...
  bool late_first = false;           // ... and found late
  bool said_wait = false;      // refused for the rate with Retry-After (api_shape::retry_after_s)
  bool shaking = false;        // a worker does its connection's handshake (not its request)
  double connect_at = 0;       // when its new connection's connect began
};

enum class event_kind { connect, accepted, handshaken, arrive, enter_worker, worker_done, answer, release, dropped, sweep, pace_wake, wake };

struct event {
  double t;
  std::uint64_t seq;
  event_kind kind;
  std::size_t call;
  int status;
  bool operator>(const event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class simulation {
 public:
  simulation(const api_shape& api, const sim_settings& s)
      : api_(api), s_(s), rng_(s.seed), t0_(clock_type::now()), attempts_(s.items, 0) {
    if (!s.fixed) {
      http::adaptive_settings a;
      a.max = static_cast<double>(s.ceiling);
      limit_ = std::make_unique<http::origin_limit>("http://sim", a, t0_);  // virtual time starts at t0_
    }
    bucket_last_ = -1;
  }

  sim_result run() {
    dispatch();
    if (limit_) push(0.01, event_kind::sweep, 0);
    while (!events_.empty()) {
      const auto e = events_.top();
      events_.pop();
      if (e.t > s_.give_up_s) break;
      t_ = e.t;
      handle(e);
      if (finished_ == s_.items) break;
    }
    sim_result r;
    r.seconds = t_;
    r.done = done_;
    r.failed = failed_;
    r.unfinished = s_.items - finished_;
    r.per_s = t_ > 0 ? static_cast<double>(done_) / t_ : 0;  // failed items are no work done
    r.calls = calls_made_;
    r.refused = refused_;
    r.dropped = dropped_;
    r.connects = connects_;
    r.peak_in_flight = peak_in_flight_;
    if (limit_) {
      const auto v = limit_->view();
      r.final_limit = v.limit;
      r.lowest = v.lowest;
      r.highest = v.highest;
    } else {
      r.final_limit = r.lowest = r.highest = *s_.fixed;
    }
    return r;
  }

 private:
  clock_type::time_point at(double t) const {
    return t0_ + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(t));
  }
  void push(double t, event_kind k, std::size_t c, int status = 0) { events_.push(event{t, seq_++, k, c, status}); }
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  double factor_now() const {
    double f = 1;
    for (const auto& c : api_.capacity)
      if (t_ >= c.at_s) f = c.factor;
    return f;
  }
  double cold_now() const { return t_ < api_.cold_s ? api_.cold_factor : 1.0; }
  std::size_t pipelines() const { return s_.fixed ? *s_.fixed : s_.ceiling; }
  bool is_slow(std::size_t item) const {
    // The same keys are slow whatever the seed (a hash of the key, as tests/servers/small_api.py).
    const auto h = (item * 2654435761u) % 10'000;
    return static_cast<double>(h) < api_.slow_share * 10'000;
  }

  // Pipelines take items (fresh ones, or retries whose backoff ended) while any is free.
  void dispatch() {
    while (busy_ < pipelines()) {
      std::size_t item;
      if (!retries_.empty() && retries_.top().first <= t_) {
        item = retries_.top().second;
        retries_.pop();
      } else if (next_fresh_ < s_.items) {
        item = next_fresh_++;
      } else {
        break;
      }
      ++busy_;
      calls_.push_back(call{item});
      const auto c = calls_.size() - 1;
      if (limit_) permit_wait_.push_back(c);
      else send(c);
    }
    if (!retries_.empty() && busy_ < pipelines()) {
      const double when = std::max(t_, retries_.top().first);
      if (wake_at_ < t_ || when < wake_at_) {  // one wake-up pending at a time: the earliest
        wake_at_ = when;
        push(when, event_kind::wake, 0);
      }
    }
    grant();
  }

  void grant() {
    if (!limit_) return;
    while (!permit_wait_.empty() && counted_ < limit_->limit()) {
      const auto c = permit_wait_.front();
      permit_wait_.pop_front();
      calls_[c].counted = true;
      ++counted_;
      limit_->started(permit_wait_.size());
      pace_wait_.push_back(c);
    }
    paced_sends();
  }

  void paced_sends() {
    while (!pace_wait_.empty()) {
      clock_type::time_point when;
      if (!limit_->take_turn(at(t_), when)) {
        calls_[pace_wait_.front()].waited_pace = true;
        // Rounded up: a wake a nanosecond before the turn would find it not due, again and again.
        const double w = std::max(std::chrono::duration<double>(when - t0_).count() + 1e-7, t_ + 1e-7);
        if (pace_wake_at_ < t_ || w < pace_wake_at_) {
          pace_wake_at_ = w;
          push(w, event_kind::pace_wake, 0);
        }
        return;
      }
      const auto c = pace_wait_.front();
      limit_->sent(calls_[c].waited_pace);
      pace_wait_.pop_front();
      send(c);
    }
  }

  // A call goes out on a kept-alive connection, or a new one (within the connect window).
  void send(std::size_t c) {
    if (api_.keep_alive && idle_ > 0) {
      --idle_;
      return transmit(c, false);
    }
    if (!limit_ || unproven_ < window_.allowed()) {
      if (limit_) {
        ++unproven_;
        calls_[c].unproven = true;
      }
      return transmit(c, true);
    }
    calls_[c].waited_window = true;
    connect_wait_.push_back(c);
  }

  void transmit(std::size_t c, bool new_connection) {
    const double start = std::max({t_, cpu_free_, paused_until_});
    cpu_free_ = start + api_.client_us * 1e-6;
    calls_[c].sent = cpu_free_;
    calls_[c].first_on_connection = new_connection;
    calls_[c].said_wait = false;
    ++calls_made_;
    ++in_flight_;
    peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
    // Watched for straggling once its request is written: over TLS, after the handshake.
    if (!(new_connection && api_.handshake_ms > 0)) {
      watch(c);
      if (new_connection && limit_) limit_->new_connection_sent(at(cpu_free_));
    }
    if (new_connection) {
      ++connects_;
      calls_[c].connect_at = cpu_free_;
      if (limit_ && api_.handshake_ms > 0 && calls_[c].counted && !calls_[c].straggler) {
        calls_[c].opening = true;
        limit_->connection_opening(+1);
      }
    }
    push(cpu_free_, new_connection ? event_kind::connect : event_kind::arrive, c);
  }

  void watch(std::size_t c) {
    if (calls_[c].counted && !calls_[c].straggler) {
      watched_.push_back(c);
      straggled_.sent();
    }
  }

  // The server's kernel takes the handshake into its listen backlog, or drops it when full.
  void connect(std::size_t c) {
    if (api_.accept_backlog > 0 && accept_pending_ >= static_cast<std::size_t>(api_.accept_backlog)) {
      ++dropped_;
      const auto after = http::first_byte_check_after(std::chrono::microseconds(static_cast<std::int64_t>(first_byte_avg_ * 1e6)));
      push(calls_[c].sent + std::chrono::duration<double>(after).count(), event_kind::dropped, c);
      return;
    }
    ++accept_pending_;
    if (s_.proof_on_ack) proven(c);  // the request is acknowledged at once: the connection exists
    accept_free_ = std::max(t_, accept_free_) + api_.accept_ms * 1e-3;
    push(accept_free_, event_kind::accepted, c);
  }

  void proven(std::size_t c) {
    auto& x = calls_[c];
    if (!x.unproven) return;
    x.unproven = false;
    const bool full = x.waited_window || unproven_ >= window_.allowed();
    --unproven_;
    window_.proven(full, limit_->limit());
    connections_free();
  }

  // Calls waiting for a connection take those that are free now.
  void connections_free() {
    while (!connect_wait_.empty() && ((api_.keep_alive && idle_ > 0) || unproven_ < window_.allowed())) {
      const auto c = connect_wait_.front();
      connect_wait_.pop_front();
      send(c);
    }
  }

  void handle(const event& e) {
    switch (e.kind) {
      case event_kind::connect: connect(e.call); break;
      case event_kind::accepted:
        --accept_pending_;
        if (api_.handshake_ms > 0) push(t_ + api_.handshake_ms * 1e-3, event_kind::handshaken, e.call);
        else arrive(e.call);
        break;
      case event_kind::handshaken: handshaken(e.call); break;
      case event_kind::arrive: arrive(e.call); break;
      case event_kind::enter_worker: enter_worker(e.call); break;
      case event_kind::worker_done: worker_done(e.call); break;
      case event_kind::answer: answer(e.call, e.status); break;
      case event_kind::release: release(e.call); break;
      case event_kind::dropped: dropped(e.call); break;
      case event_kind::sweep: sweep(); break;
      case event_kind::pace_wake:
        if (e.t >= pace_wake_at_) pace_wake_at_ = -1;
        paced_sends();
        break;
      case event_kind::wake:
        if (e.t >= wake_at_) wake_at_ = -1;
        dispatch();
        break;
    }
  }

  // The TLS handshake is done: the connection is open, and the request goes (its latency counts
  // from here, as the client's).
  void handshaken(std::size_t c) {
    auto& x = calls_[c];
    if (api_.handshake_service_ms > 0 && !x.shaking) {  // the wait done, the server's work
      x.shaking = true;
      x.hold_ms = api_.handshake_service_ms * cold_now();
      return enter_worker(c);
    }
    x.shaking = false;
    if (x.opening) {
      x.opening = false;
      limit_->connection_opening(-1);
    }
    if (limit_) limit_->connection_opened(std::chrono::microseconds(static_cast<std::int64_t>((t_ - x.connect_at) * 1e6)));
    x.sent = t_;
    watch(c);
    if (limit_) limit_->new_connection_sent(at(x.connect_at));
    arrive(c);
  }

  void refuse(std::size_t c, int status) {
    ++refused_;
    push(t_ + 0.0002, event_kind::answer, c, status);
  }

  void arrive(std::size_t c) {
    if (api_.per_client_cap > 0 && in_server_ >= static_cast<std::size_t>(api_.per_client_cap)) return refuse(c, 429);
    if (api_.rate_per_s > 0) {
      // nginx limit_req: the excess drains at the rate; one that would exceed the burst is refused.
      const double rate = api_.rate_per_s * factor_now();
      const double excess = bucket_last_ < 0 ? 0 : std::max(0.0, excess_ - (t_ - bucket_last_) * rate + 1);
      if (excess > api_.burst + 1e-9) {
        calls_[c].said_wait = api_.retry_after_s > 0;
        return refuse(c, api_.rate_status);
      }
      excess_ = excess;
      bucket_last_ = t_;
    }
    ++in_server_;
    const double base = api_.delay_ms + api_.per_in_flight_ms * static_cast<double>(in_server_);
    const double delay = (is_slow(calls_[c].item) ? api_.slow_ms : base * (1 + api_.jitter * (2 * uniform() - 1))) * cold_now();
    const double service = api_.service_ms * cold_now();
    if (api_.delay_holds_worker) {
      calls_[c].hold_ms = delay + service;
      enter_worker(c);
    } else {
      calls_[c].hold_ms = service;
      push(t_ + delay * 1e-3, event_kind::enter_worker, c);
    }
  }

  std::size_t workers_now() const {
    if (api_.workers <= 0) return 0;
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(api_.workers * factor_now())));
  }

  void enter_worker(std::size_t c) {
    const auto w = workers_now();
    if (w == 0 || working_ < w) {
      ++working_;
      push(t_ + calls_[c].hold_ms * 1e-3, event_kind::worker_done, c);
      return;
    }
    // (A handshake is never refused: it waits for a worker as long as it takes.)
    if (!calls_[c].shaking && api_.backlog >= 0 && worker_queue_.size() >= static_cast<std::size_t>(api_.backlog)) {
      --in_server_;
      return refuse(c, api_.on_overflow == api_shape::overflow::refuse_429 ? 429 : 503);
    }
    worker_queue_.push_back(c);
  }

  void worker_done(std::size_t c) {
    --working_;
    if (calls_[c].shaking) {
      handshaken(c);
    } else {
      --in_server_;
      push(t_, event_kind::answer, c, 200);
    }
    const auto w = workers_now();
    while (!worker_queue_.empty() && (w == 0 || working_ < w)) {
      const auto next = worker_queue_.front();
      worker_queue_.pop_front();
      ++working_;
      push(t_ + calls_[next].hold_ms * 1e-3, event_kind::worker_done, next);
    }
  }

  // A request the server never accepted: the client hears of it (tcp_signals.hpp) and sends it
  // again on another connection, keeping its permit; no attempt is spent.
  void dropped(std::size_t c) {
    --in_flight_;
    auto& x = calls_[c];
    if (limit_) {
      // Known when its request was sent on the new connection: as the client, drops of
      // connections opened before the last cut change nothing.
      limit_->overloaded(http::limit_signal::dropped_handshake, at(t_), at(x.sent));
      window_.dropped(at(x.sent), at(t_));
      // Its first request was told sent with its connect (over TLS only after the handshake, which
      // a dropped connection never had): it goes again on another.
      if (api_.handshake_ms <= 0) limit_->new_connection_unsent(at(x.connect_at));
      if (x.unproven) {
        x.unproven = false;
        --unproven_;
      }
      if (x.opening) {
        x.opening = false;
        limit_->connection_opening(-1);
      }
    }
    x.waited_window = false;
    send(c);
  }

  void answer(std::size_t c, int status) {
    auto& x = calls_[c];
    x.answered = true;
    --in_flight_;
    first_byte_avg_ = first_byte_avg_ == 0 ? t_ - x.sent : (3 * first_byte_avg_ + (t_ - x.sent)) / 4;
    if (limit_) proven(c);
    ++answers_;
    if (x.first_on_connection && !x.late_first) {
      ++first_served_;
      http::age_first_requests(first_served_, first_late_);
    }
    if (x.first_on_connection && limit_) limit_->first_request_answered(at(x.connect_at), x.late_first);
    if (api_.keep_alive) {
      ++idle_;
      ++kept_alive_answers_;
    } else if (limit_) {
      limit_->closed_after_answer();
    }
    connections_free();
    double hold_until = t_;
    // Retry-After: the client pauses every call of the origin that long (as the engine does), and
    // the item goes again after it; the limit hears the refusal with its pause.
    const double said_wait = x.said_wait ? api_.retry_after_s : 0;
    if (said_wait > 0) paused_until_ = std::max(paused_until_, t_ + said_wait);
    if (limit_) {
      const auto first_byte = std::chrono::microseconds(static_cast<std::int64_t>((t_ - x.sent) * 1e6));
      auto d = limit_->answered(first_byte, status, said_wait > 0, at(t_), x.straggler);
      if (said_wait > 0)
        d = limit_->paused_by_api(status, std::chrono::milliseconds(static_cast<std::int64_t>(said_wait * 1e3)), first_byte, at(t_));
      if (trace_ && d.changed)
        std::fprintf(stderr, "%8.3f s: %s; in flight %zu (+%zu stragglers), at the server %zu, refused %llu of %llu\n", t_,
                     d.detail.c_str(), counted_, stragglers_, in_server_, (unsigned long long)refused_,
                     (unsigned long long)calls_made_);
      // A refusal keeps its permit as long as an answer usually takes (the client does so):
      // else each fast refusal frees a permit for the next refusal, thousands a second.
      if (status == 429 || status == 503)
        hold_until = x.sent + std::chrono::duration<double>(http::refused_permit_hold(limit_->typical_latency())).count();
    } else if (status == 429) {
      paused_until_ = std::max(paused_until_, t_ + 1.0);  // a bare 429 pauses the host 1 s (fixed mode)
    }
    if (said_wait > 0 && status != 200 && attempts_[x.item] + 1 < s_.max_attempts) {
      ++attempts_[x.item];
      retries_.push({t_ + said_wait, x.item});
      if (hold_until > t_) push(hold_until, event_kind::release, c);
      else release(c);
      return;
    }
    if (status >= 200 && status < 300) {
      ++done_;
      ++finished_;
    } else if (++attempts_[x.item] >= s_.max_attempts) {
      ++failed_;
      ++finished_;
    } else {
      const double cap = std::min(s_.backoff_max_ms, s_.backoff_base_ms * std::pow(2.0, attempts_[x.item] - 1));
      retries_.push({t_ + uniform() * cap * 1e-3, x.item});
    }
    if (hold_until > t_) push(hold_until, event_kind::release, c);
    else release(c);
  }

  void release(std::size_t c) {
    auto& x = calls_[c];
    if (limit_) {
      if (x.straggler) {
        --stragglers_;
        limit_->straggling(-1);
      } else if (x.counted) {
        --counted_;
        limit_->ended();
      }
    }
    --busy_;
    dispatch();
  }

  void sweep() {
    const auto after = http::straggler_after(limit_->typical_latency());
    if (after.count() > 0) {
      const double late = std::chrono::duration<double>(after).count();
      bool released = false;
      while (!watched_.empty()) {
        auto& x = calls_[watched_.front()];
        if (x.answered || !x.counted) {
          watched_.pop_front();
          continue;
        }
        if (x.sent + late <= t_ && x.first_on_connection) {
          if (!x.late_first) {
            ++first_late_;
            http::age_first_requests(first_served_, first_late_);
          }
          x.late_first = true;
          if (http::unserved_connection(answers_, kept_alive_answers_, first_late_, first_served_)) {
            watched_.pop_front();  // keeps its permit until its answer, as the client's does
            limit_->connections_unserved(at(t_));
            continue;
          }
        }
        if (x.sent + late > t_ || !http::may_release(stragglers_, limit_->limit(), s_.ceiling, straggled_.share())) break;
        straggled_.turned();
        x.counted = false;
        x.straggler = true;
        --counted_;
        ++stragglers_;
        limit_->ended();
        limit_->straggling(+1);
        watched_.pop_front();
        released = true;
      }
      if (released) grant();
    }
    push(t_ + 0.01, event_kind::sweep, 0);
  }

  const api_shape& api_;
  const sim_settings& s_;
  std::mt19937_64 rng_;
  clock_type::time_point t0_;
  double t_ = 0;
  std::uint64_t seq_ = 0;
  std::priority_queue<event, std::vector<event>, std::greater<>> events_;
  std::unique_ptr<http::origin_limit> limit_;
  std::vector<call> calls_;
  std::vector<int> attempts_;
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>> retries_;
  std::size_t next_fresh_ = 0, busy_ = 0, finished_ = 0, done_ = 0, failed_ = 0;
  std::deque<std::size_t> permit_wait_, pace_wait_, watched_, worker_queue_;
  std::size_t counted_ = 0, stragglers_ = 0, in_flight_ = 0, peak_in_flight_ = 0;
  std::size_t in_server_ = 0, working_ = 0;
  double cpu_free_ = 0, paused_until_ = 0;
  double excess_ = 0, bucket_last_ = -1;
  double wake_at_ = -1, pace_wake_at_ = -1;
  std::uint64_t calls_made_ = 0, refused_ = 0, dropped_ = 0, connects_ = 0;
  http::connect_window window_;
  http::straggler_share straggled_;
  std::size_t idle_ = 0, unproven_ = 0, accept_pending_ = 0;
  std::uint64_t answers_ = 0, kept_alive_answers_ = 0;  // answers, and those on kept connections
  std::uint64_t first_served_ = 0, first_late_ = 0;  // new connections' first requests, in time or late
  double accept_free_ = 0, first_byte_avg_ = 0;
  std::deque<std::size_t> connect_wait_;
  bool trace_ = std::getenv("DIBS_SIM_TRACE") != nullptr;  // each move of the limit, on stderr
};

}  // namespace

sim_result simulate(const api_shape& api, const sim_settings& s) { return simulation(api, s).run(); }

sweep_best best_fixed(const api_shape& api, sim_settings s) {
  sweep_best best;
  const auto ceiling = s.ceiling;
  for (std::size_t c = 1;; c = std::min(c * 2, ceiling)) {
    s.fixed = c;
    const auto r = simulate(api, s);
    // Finishing every item comes first: a setting that fails items is not a good one.
    const bool better = best.concurrency == 0 || (r.failed < best.result.failed) ||
                        (r.failed == best.result.failed && r.per_s > best.result.per_s);
    if (better) best = {c, r};
    if (c == ceiling) break;
  }
  return best;
}

}  // namespace dibs::sim
