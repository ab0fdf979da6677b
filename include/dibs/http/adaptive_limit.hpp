// How many requests one API origin is sent at once, found from its answers (pure: the caller
// passes the time; unit-tested without a server).
//
// Why: the right number depends on the server. A threaded server from a language's standard
// library serves a handful at once and drops connections past its small backlog; a CDN serves
// thousands; behind a slow tail (a few items that take seconds) more requests in flight keep the
// fast ones moving. A fixed number is too small for one and a flood for another, so the limit is
// found from what the API gives back: its answers per second (the goal), its latency and its
// overload signals (the guards), as Vector's adaptive request concurrency, Netflix's
// concurrency-limits and BBR do:
//   - slow start: from `initial`, multiplied by `start_growth` each round trip (a round trip ends
//     with the first answer to a request sent after it began) while the requests in flight reach
//     the limit (without that demand there is nothing to learn: a run held back by rate does not
//     grow it) and the round trip's latency stays near the fastest yet: by Little's law, answers
//     per second are the requests in flight over their latency, so while latency holds, more in
//     flight is more answers. It ends when two round trips in a row are slower than the fastest
//     by the spike rule below (the server queues: the limit comes down by the ratio), on loss, or
//     when the pipe is full (full_pipe.hpp): more requests at the server brought no more answers
//     a second (a TLS API whose handshakes cost it CPU, an HTTP/1.0 server: neither slows);
//     Against an API that scales (dibs exists to hide its latency) it reaches the ceiling in a
//     few round trips: 2 to 1,000 in five at x4, where a measuring period per doubling took nine
//     periods of at least two round trips (0.51 of a fixed 1,000 at 500 ms). Where kept-alive
//     connections take more than two round trips to open (a slow TLS handshake), a step's new
//     connections are a cost the round trips of those already open can't judge: it grows x2,
//     once the answers a second show the last step paid (connection_opened);
//   - then hill climbing: the limit is held, then tried `probe_step` higher and kept if the
//     answers per second rose by `keep_gain` (in the probe's period and on average over the
//     `hold_periods` after it: one period's rise is often chance) or the latency rose so much
//     less than the step that by Little's law the answers rose by `drop_tolerance`, else tried
//     as much lower and kept if they did not fall by more than `drop_tolerance` (fewer in
//     flight for the same answers is kinder to the server), else back where it was; after each
//     such probe that found nothing, held twice as long before the next (up to
//     `max_hold_periods`); probes kept with the answers up three quarters as much as the calls
//     at least (the server scales) make the next one go twice as far (climb_), none after a
//     refusal or a lost call; after slow start was cut (by the latency's ratio or by
//     connections the server never took, not a 429, 502-504, timeout or reset), probes up go
//     halfway back (the geometric mean, at most x2) to where slow start stopped, until one finds
//     nothing or such a loss comes;
//   - multiplicative decrease on loss (429, 502-504, timeouts, resets, refused or dropped
//     connections: the server says it is overloaded) and on a latency spike (two round trips in a
//     row whose latency is past the moving average by more than `deviation_scale`
//     deviations, by half and by `spike_min`: a server whose latency doubles is queueing, and the
//     limit comes down by the ratio; one slow round trip alone is a clump of slow items or the
//     client's own machine busy for a moment);
//   - at most one such decrease per round trip, and the round trip after one, whose answers were
//     sent before it, decreases nothing.
// Latency is the time from the request's write begun to the answer's header, the lower quartile of a
// round trip's answers: slow items say nothing of the server's load, queueing delays every answer.
// Waiting for a permit, a connection or a rate slot is not counted.
#pragma once

#include <dibs/http/full_pipe.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dibs::http {

struct adaptive_settings {
  double initial = 2;
  double min = 1;
  double max = 1000;                // the ceiling (concurrency)
  double start_growth = 8;          // slow start: the limit x this a round trip
  double probe_step = 0.25;         // a probe tries the limit this much higher (or lower)
  double keep_gain = 0.05;          // ... kept higher when the answers per second rose this much
  double drop_tolerance = 0.03;     // ... kept lower when they fell no more than this
  int hold_periods = 2;             // periods at a limit before the next probe ...
  // ... doubled after each probe that found nothing better, up to this: each probe spends a
  // period at a worse limit, and against an API fastest one request at a time (Python's
  // http.server: 0.75 of the speed at two) probing every third period cost a quarter of its
  // time. A kept probe, a decrease or a new ceiling brings the hold back to hold_periods.
  int max_hold_periods = 16;
  double deviation_scale = 2.5;     // latency spike: a round trip's > average + scale × deviation ...
  double spike_floor = 0.5;         // ... and > average × (1 + this) ...
  // ... and by at least this much: a server that answers in tens of microseconds (measured: 16-30
  // us from Python's http.server on loopback) shows a scheduler's millisecond as a 50x "spike",
  // and a client on a busy 2-core machine (a build beside it) saw round trips of 3-7 ms against
  // APIs answering in 0.1-2 ms; below this, the answers per second (hill climbing) judge alone.
  std::chrono::microseconds spike_min{5'000};
  double ewma_alpha = 0.4;          // weight of the newest round trip in the average and deviation
  double loss_decrease = 0.7;       // limit × this on loss
  std::chrono::microseconds min_window{5'000};   // a round trip's decision waits at least this ...
  // ... and for this many answers (or a loss): the lower quartile of fewer strays by half when
  // latencies spread (10-90 ms), and a moving average fed by them took the run's usual latency
  // at a thousand in flight for a spike.
  std::size_t min_samples = 8;
  std::chrono::microseconds min_period{100'000};  // a measuring period lasts at least this ...
  // ... and has at least this many answers: with fewer, behind a slow tail (a few answers a
  // period), the answers per second of one period were noise of +-30%, and probes were kept or
  // dropped by chance.
  std::uint64_t min_period_answers = 24;
};

// Why the limit last went down (or "" when it never did).
enum class limit_signal { none, latency, throttled, unavailable, timeout, reset, refused, dropped_handshake };
const char* to_string(limit_signal s);

class adaptive_limit {
 public:
  using clock = std::chrono::steady_clock;

  adaptive_limit(adaptive_settings s, clock::time_point now);

  // The number of requests that may be in flight now (at least 1).
  std::size_t limit() const { return static_cast<std::size_t>(limit_); }
  // A request starts; `in_flight` counts it, `waiting` the requests queued behind the limit.
  // Demand that reaches the limit is what allows it to grow. `opening`: of `in_flight`, requests
  // whose connection is being opened (not at the server yet: full_pipe.hpp).
  void started(std::size_t in_flight, std::size_t waiting, std::size_t opening = 0);
  // A new connection took `took` to open (the connect that succeeded, TLS handshake). Where that
  // costs more than two round trips, slow start's next step waits for the answers a second to
  // show the last one paid.
  void connection_opened(std::chrono::microseconds took);
  // A new connection's first request went out (`opened_at`: when its connect began), and its
  // answer came. Slow start's step waits for most of the last step's new connections to answer
  // their first request (step_waits): against a server that takes a few connections and queues
  // the rest unserved (Apache's prefork, a worker a connection), the answers of the connections
  // it took held their latency, and the next step x8 went out before any of the others could be
  // found late. Told before the answer itself (answered()), which takes a step that waited.
  void new_connection_sent(clock::time_point opened_at);
  void new_connection_answered(clock::time_point opened_at);
  // ... or its request was never taken (a dropped handshake: it goes again on another): not sent.
  void new_connection_unsent(clock::time_point opened_at);
  // The answers so far whose connection was not kept (the API closes its connections: every
  // call pays its own); told before each answer.
  void connections_closed(std::uint64_t closed_after_answer) { closed_ = closed_after_answer; }
  // An answer's first byte came `latency` after its request was written. True when this ended a
  // round trip or a measuring period, so a decision was made (the limit may not have changed).
  // `straggler`: its request ran beside the limit (straggler_watch.hpp): the answer counts among
  // the answers per second, its latency nowhere (it is known to be a slow item).
  bool answered(std::chrono::microseconds latency, clock::time_point now, bool straggler = false);
  // The server (or the path to it) signalled overload. True as for answered(). `since`: when the
  // request or connection that carried the signal began, when known; a dropped handshake of a
  // connection opened before the last decrease is old news (it is known 20 ms or more after its
  // connect, many round trips of a fast API: a burst's drops took the limit 128 -> 1 one round
  // trip at a time, where the first cut was all the burst said).
  bool overloaded(limit_signal why, clock::time_point now, clock::time_point since = {});
  // So many new connections' first requests are unanswered long past the API's usual answer (the
  // client's straggler watch: unserved_connection) that the server may take no more connections
  // (Apache's prefork, a worker a connection, the rest in its listen queue), and the answers slow
  // start judges come from the connections it took. Slow start ends where it stands: each step up
  // would open more connections into that queue, each holding its call until a worker is free.
  // Not cut here (the calls it holds keep the served connections busy); their answers, when they
  // come, are samples as any call's. True when slow start ended.
  bool connections_unserved(clock::time_point now);
  // The API refused a request for its load (429 or 503 with no word of when to come back): the
  // limit comes down, once a round trip, to the share of that round trip's requests that got
  // through (refused 1 in 3, two thirds of the limit: what the API took), by 0.2 to 0.9.
  // `paused`: it said when to come back, and every call of the origin waits that long
  // (origin_limit::paused_by_api). Then by half at least (a probe up: back to where it started,
  // no lower): each refusal costs every call the pause, and a token bucket refuses right after
  // each one at any limit past its rate (it is full again): by the share, 1 refused in 20, its
  // limit came down 16 -> 1 in eight pauses, one a step.
  bool refused(limit_signal why, clock::time_point now, bool paused = false);
  // No probe up for `hold` from `now` (a probe's refusal would cost a pause of every call:
  // origin_limit), for a probe a quarter up; one that may gain more is held as much less (from
  // 1 to 2 the answers may double: a quarter of the hold). Refused again within the last hold's
  // length after it ended (the probe it let through was refused, as a token bucket refuses each
  // probe past its rate), the hold doubles (max_hold_doublings times at most): a pause every
  // hold is a tenth of a run's time. The API said how many it takes: no way back past it, nor a
  // climb.
  void hold_probes(clock::time_point now, clock::duration hold);
  // A new ceiling (the dashboard's concurrency control); the limit is clipped to it.
  void set_max(double max);
  // How late the client's own event loop runs its handlers lately (a timer's lateness): an answer
  // waits that long in the client before its latency is read. A rise in latency no larger than
  // twice this is the client's, not the server's, and is no sign of queueing there: with dibs's
  // shards and the API on two cores, 1,000 calls in flight kept the client's CPU busy, answers
  // read 20 ms late looked like a 100 ms spike, and the limit went from 1,000 to 88 (0.67 of a
  // fixed 1,000), though more in flight gave more answers.
  void client_delay(std::chrono::microseconds d) { client_delay_us_ = static_cast<double>(d.count()); }

  // What /metrics and the dashboard show.
  bool slow_start() const { return phase_ == phase::slow_start; }
  std::chrono::microseconds min_latency() const { return min_latency_; }     // 0 before any answer
  std::chrono::microseconds recent_latency() const { return recent_; }       // the last round trip's
  // The origin's usual answer: the moving average of the round trips' latencies, or before the
  // first round trip ended the fastest answer yet (0 before any answer).
  std::chrono::microseconds typical_latency() const {
    return average_us_ > 0 ? std::chrono::microseconds(static_cast<std::int64_t>(average_us_)) : min_latency_;
  }
  limit_signal last_decrease() const { return last_decrease_; }
  std::size_t lowest() const { return static_cast<std::size_t>(lowest_); }   // the range it moved in
  std::size_t highest() const { return static_cast<std::size_t>(highest_); }
  std::uint64_t decreases() const { return decreases_; }
  double max() const { return s_.max; }
  double answers_per_second() const { return best_rate_; }  // at the limit held (0: not measured)

 private:
  enum class phase { slow_start, hold, probe_up, confirm_up, probe_down, confirm_down };
  bool probing_up() const { return phase_ == phase::probe_up || phase_ == phase::confirm_up; }
  // What a probe up must gain to be kept: keep_gain, or twice how far a held limit's periods
  // stray from their average (a shared machine's swings), if more.
  double gain_needed() const { return std::max(s_.keep_gain, 2 * noise_); }

  // Ends the round trip when it has lasted one; true when a decision was made.
  bool maybe_decide(clock::time_point now);
  // Ends the measuring period when it is long enough, and climbs; true when it ended.
  bool maybe_measure(clock::time_point now);
  // Slow start's round trips: true when one ended (and the limit grew, or slow start ended).
  bool slow_start_round(std::chrono::microseconds latency, clock::time_point now, bool straggler);
  void end_slow_start(double factor, clock::time_point now);
  // The lower quartile of a round trip's latencies (reordered).
  static double lower_quartile(std::vector<std::uint32_t>& us);
  // The usual latency of slow start's round trips before one of latency `q` (which joins them).
  double usual_round_us(double q) const;
  void remember_round(double q, bool judged);
  static constexpr std::size_t round_samples = 8;  // answers a round trip's latency is judged on
  // A connection costs more than its requests when it takes longer to open than this many round
  // trips (a TCP connect and a TLS 1.3 handshake take two of the network's round trips, a request
  // one and the server's time); slow start's step is then costly_growth.
  static constexpr double costly_open = 2;
  static constexpr double costly_growth = 2;
  static constexpr double paused_decrease = 0.5;  // a refusal with a pause: the limit x this at most (refused)
  void set_limit(double l);
  // A probe up's usual step from `l`: a quarter, at least one (the way back's may be larger).
  double quarter_up(double l) const { return std::max(l + 1, std::floor(l * (1 + s_.probe_step))); }
  // A probe up further than a quarter (the way back's: ramp_top_; a climbing one's: climb_), while
  // it is tried or confirmed.
  bool long_probe() const { return probing_up() && base_limit_ > 0 && limit_ > quarter_up(base_limit_); }
  // The next probe up's limit: a quarter up, or halfway back (ramp_top_), or after probes whose
  // answers rose with their calls, twice as far as the last (climb_).
  double next_up() const;
  void start_probe_up(double up);
  // The answers a second at the probe rose at least three quarters as much as the calls (the
  // server did not queue them).
  bool scaled(double rate) const;
  // Probes up kept in a row whose answers rose with their calls (scaled; way-back probes count too): the next one goes a
  // quarter times two to this power further (x1.5, then x2 at most). Against an API that scales,
  // a slow start ended early (a backlog of 5 dropped a burst's connects; a stall) left the
  // limit to climb from 4 a quarter a probe, three periods each: 4 -> 88 took 7.5 s. A climbing
  // probe is kept only where its answers rose so (climbing_): a plateau's noise keeps none.
  int climb_ = 0;
  static constexpr int max_climb = 2;
  bool climbs_ = true;  // false once a refusal or a lost call was heard (nothing_sent_lost), or a refusal's pause
  // Whether a signal says nothing sent was lost: a queue (latency), or a connection the server
  // never took (dropped or refused: no request reached it); not a 429, 502-504, timeout or reset.
  static bool nothing_sent_lost(limit_signal why) {
    return why == limit_signal::latency || why == limit_signal::dropped_handshake || why == limit_signal::refused;
  }
  bool climbing_ = false;
  void decrease(double factor, limit_signal why, clock::time_point now);
  void start_period(clock::time_point now);
  // A probe up found nothing better (or was not confirmed): back, and as much lower next.
  void after_failed_probe_up();
  // A probe down lost answers (or was not confirmed): back where it started, probed less often.
  void after_failed_probe_down();
  // The measuring period's latency (the mean of its round trips') against where the probe up
  // started (probe_from_us_): up by so much less than the probe's step that the answers rose by
  // drop_tolerance (Little's law), or by no more than the client's own lateness.
  bool latency_held() const;
  // ... and for a probe down, a quarter of its step lower: the server had queued them.
  bool latency_fell() const;
  // The period's mean latency when it can tell a probe's effect (-1 when not: the latency's own
  // swings are larger than a quarter of a probe's step).
  double period_latency_us() const;
  // Each probe that finds nothing doubles the hold before the next (max_hold_periods at most).
  void probe_found_nothing() { hold_for_ = std::min(2 * hold_for_, s_.max_hold_periods); }

  adaptive_settings s_;
  double limit_;
  phase phase_ = phase::slow_start;
  // The current round trip (window).
  clock::time_point window_start_;
  std::vector<std::uint32_t> samples_us_;
  limit_signal loss_ = limit_signal::none;
  std::uint64_t window_answers_ = 0, window_refused_ = 0;
  bool cooling_ = false;  // the round trip after a decrease: its answers were sent before it
  double suspect_us_ = 0;  // the last round trip's latency when it spiked (unconfirmed), else 0
  // Slow start's round trip: since when, its latencies (not stragglers'), whether it met the
  // limit; the fastest round trip's latency; a round trip that was slow (unconfirmed).
  clock::time_point round_start_;
  std::vector<std::uint32_t> round_us_;
  // The first round trip's answers with when their requests went out (burst_order.hpp).
  std::vector<std::pair<std::int64_t, std::uint32_t>> first_round_;
  bool round_limited_ = false;
  std::vector<double> round_history_;  // the round trips' lower quartiles (the last 16)
  full_pipe pipe_;                     // answers a second against the requests at the server
  double open_us_ = 0;                 // a new connection's usual time to open (moving average)
  std::uint64_t answered_ = 0, closed_ = 0;  // answers, and those whose connection was not kept
  clock::time_point stepped_at_{};     // slow start's last growth
  std::uint64_t samples_at_step_ = 0;  // the pipe's samples then
  // Slow start's steps are costly: kept-alive connections that take longer to open than
  // costly_open round trips.
  bool costly_steps(std::chrono::microseconds round_trip) const;
  // Fewer than half the answers so far closed their connection (none yet: kept, as far as known).
  bool keeps_connections() const { return answered_ == 0 || 2 * closed_ < answered_; }
  void step_up(double factor, clock::time_point now);  // slow start grows the limit
  // The last step's new connections (opened from counting_from_): first requests sent, and
  // answered. Fewer than three quarters answered (a slow tail's few do not hold it), the step
  // waits (step_waits; not where connections are not kept: every call opens one): a round trip
  // that would have stepped lets the answer that brings them to three quarters take it
  // (step_pending_, cleared as each round trip ends), and since waiting_since_ (the first such
  // round trip) a straggler's lateness at most.
  std::uint64_t step_sent_ = 0, step_answered_ = 0;
  clock::time_point counting_from_{};
  bool step_pending_ = false;
  clock::time_point waiting_since_{};
  bool step_waits() const;
  // A round trip says step: steps, or waits for the last step's connections (step_waits).
  void step_or_wait(std::chrono::microseconds round_trip, clock::time_point now);
  // Counts the connections opened from `from` (max: none until the next step), afresh.
  void count_connections_from(clock::time_point from);
  // The step that waited, once its connections have answered: true when taken.
  bool take_waiting_step(clock::time_point now);
  bool judged_history_ = false;        // ... of enough answers each
  bool slow_round_ = false;
  double client_delay_us_ = 0;        // client_delay()
  double ramp_max_us_ = 0;            // the slowest answer (not a straggler's) in slow start
  clock::time_point settle_until_{};  // after slow start: no spike, no average, until then
  // The current measuring period: answers per second at one limit.
  clock::time_point period_start_;
  clock::time_point measure_from_;  // a round trip after its start: answers counted from here
  std::uint64_t period_answers_ = 0;
  std::uint64_t period_starts_ = 0;    // requests started in it ...
  std::uint64_t period_limited_ = 0;   // ... of which met the limit reached (demand)
  int periods_held_ = 0;
  int hold_for_ = 0;  // periods to hold before the next probe (hold_periods, doubled by failed probes)
  // No probe up within probe_hold_ of held_at_ (hold_probes), a quarter's step; a longer step's
  // hold is as much shorter: probe_held.
  clock::time_point held_at_{};
  clock::duration probe_hold_{};
  bool probe_held(double up, clock::time_point now) const;
  bool paused_loss_ = false;  // the loss heard since the last decision came with a pause (refused)
  int hold_doublings_ = 0;
  static constexpr int max_hold_doublings = 3;
  double probe_from_us_ = 0;     // the latency a probe up started from (the moving average then)
  double held_latency_us_ = 0;    // the last held period's latency ...
  double latency_noise_ = 0;      // ... and the moving average of how far the next strayed from it
  double period_latency_us_ = 0;  // the period's round trips' latencies, summed ...
  int period_windows_ = 0;        // ... and counted
  double confirm_rate_ = 0;  // answers per second summed over the periods confirming a probe up
  bool prefer_down_ = false;  // the next probe goes down (the last one down was kept, or the server queued)
  // Where slow start stood when a cut ended it (0: no way back to go). Against a server whose
  // latency grows with its load (5 ms + 2 ms a call in flight), the cut by the latency's ratio, a
  // queue's rule, took 16 -> 3, and probes a quarter up climbed back 3 -> 4 -> 5 -> ... -> 15 in
  // eight probes of three periods each, a third of a 3,000-item run. Each probe up goes halfway
  // there (the geometric mean, 3 -> 6 -> 9 -> 12) while the probes are kept: four probes. A queue
  // refuses the first (the cut was its capacity: twice it, twice the latency, no answer more).
  double ramp_top_ = 0;
  double noise_ = 0;  // moving average of |a held period's answers per second - the average| / average
  bool restart_period_ = false;  // the ceiling moved: the period under way measured another limit
  double base_limit_ = 0;   // the limit a probe started from
  double base_rate_ = 0;    // answers per second at the base limit
  double best_rate_ = 0;    // answers per second at the limit held now
  // Across round trips.
  double average_us_ = 0;  // moving average of the round trips' latencies
  double deviation_us_ = 0;
  std::chrono::microseconds min_latency_{0};
  std::chrono::microseconds recent_{0};
  limit_signal last_decrease_ = limit_signal::none;
  clock::time_point last_decrease_at_{};  // a decrease's, or slow start's end at a full pipe
  double lowest_, highest_;
  std::uint64_t decreases_ = 0;
};

}  // namespace dibs::http
