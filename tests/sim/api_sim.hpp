// A simulated API and a simulated client in virtual time, for the adaptive limit: the client's
// brain is the product's own (origin_limit: the concurrency limit and the pace; the straggler
// rule of straggler_watch.hpp), the client's body and the server are modelled here. Deterministic
// for a seed, and a minute of a run takes milliseconds, so unit tests can hold the limit against
// a family of APIs (api_family.hpp) and the best fixed concurrency of a sweep, and a developer can
// see where it loses.
//
// The client: `ceiling` pipelines (--concurrency) with always an item to call for until `items`
// are finished; a call waits for a permit of the limit (and a turn of the pace), costs the
// client `client_us` of one CPU to send (the machine's own ceiling), and its answer decides the
// item: 2xx done, a refusal or a 5xx retried after a full-jitter backoff (as the engine does),
// failed after `max_attempts` calls. With `fixed`, no limit and no pace: every pipeline calls.
//
// Connections: a call takes an idle kept-alive connection, or opens one; with the adaptive limit,
// new connections not yet proven are held to the client's connect window (connect_window.hpp,
// the product's). The server accepts connections one at a time (`accept_ms` each) into a listen
// backlog of `accept_backlog`; past it a handshake is dropped: the client notices after
// first_byte_check_after (tcp_signals.hpp), halves its window, and sends the call again on
// another connection, spending no attempt. Without keep-alive every call opens one. Over TLS
// (`handshake_ms`) the handshake follows the accept; the request goes once it is done.
//
// The server: every request first waits `delay_ms` (a backend, a sleep; the slow tail's keys
// `slow_ms`), holding a worker meanwhile or not (`delay_holds_worker`), then takes `service_ms`
// of one of `workers` (0: as many as asked). Requests waiting for a worker past `backlog` are
// refused (503 or 429). Before all that, a per-client cap on requests at once and a token bucket
// on the rate may refuse it. Capacity (workers and rate) can change during the run, and the first
// seconds can be slower (a cold start).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::sim {

struct api_shape {
  std::string name;
  double delay_ms = 0;
  double per_in_flight_ms = 0;  // ... plus this for each call in the server when one arrives (itself included)
  double jitter = 0.1;         // delay × (1 + jitter × uniform(-1, 1))
  double slow_share = 0;       // this share of the keys (always the same ones) ...
  double slow_ms = 0;          // ... wait this long instead of delay_ms
  bool delay_holds_worker = false;
  int workers = 0;             // 0: unlimited
  double service_ms = 0;
  int backlog = -1;            // requests waiting for a worker; -1: unlimited
  enum class overflow { refuse_503, refuse_429 } on_overflow = overflow::refuse_503;
  bool keep_alive = true;
  int accept_backlog = 0;      // connections waiting to be accepted; 0: unlimited
  double accept_ms = 0;        // the server's time to accept one
  // A TLS handshake after the accept, before the request (a thread of its own: no worker held).
  // The client's call opens its connection meanwhile (origin_limit::connection_opening).
  double handshake_ms = 0;
  double handshake_service_ms = 0;  // ... and then this of a worker (the server's side of its keys)
  int per_client_cap = 0;      // more requests at once than this: 429 (0: no cap)
  double rate_per_s = 0;       // a token bucket: past it, `rate_status` (0: no rate)
  double burst = 0;
  int rate_status = 503;
  double retry_after_s = 0;    // ... saying Retry-After: this (the client pauses every call that long)
  struct change {
    double at_s;
    double factor;  // workers and rate × this (of the shape's own), from at_s on
  };
  std::vector<change> capacity;
  double cold_s = 0;           // the first cold_s seconds ...
  double cold_factor = 1;      // ... every service and delay × this
  double client_us = 20;       // the client's CPU per call: one core's worth of calls a second
};

struct sim_settings {
  std::size_t items = 20'000;
  std::size_t ceiling = 1000;             // --concurrency
  std::optional<std::size_t> fixed;       // --fixed-concurrency --concurrency N
  int max_attempts = 5;
  double backoff_base_ms = 500;           // the engine's full-jitter backoff
  double backoff_max_ms = 30'000;
  double timeout_s = 30;
  double give_up_s = 3600;                // a run stops here (counted as unfinished)
  std::uint64_t seed = 1;
  // A new connection is proven (leaves the connect window) when its request is acknowledged by
  // the server's kernel, not when its answer comes.
  bool proof_on_ack = true;
};

struct sim_result {
  double seconds = 0;       // until the last item finished
  double per_s = 0;         // items done a second
  std::size_t done = 0, failed = 0, unfinished = 0;
  std::uint64_t calls = 0, refused = 0, dropped = 0, connects = 0;
  std::size_t final_limit = 0, lowest = 0, highest = 0;
  std::size_t peak_in_flight = 0;
  double refused_share() const { return calls ? static_cast<double>(refused) / static_cast<double>(calls) : 0; }
};

sim_result simulate(const api_shape& api, const sim_settings& s);

// The best of a fixed sweep (1, 2, 4, ... and the ceiling): its concurrency and result.
struct sweep_best {
  std::size_t concurrency = 0;
  sim_result result;
};
sweep_best best_fixed(const api_shape& api, sim_settings s);

}  // namespace dibs::sim
