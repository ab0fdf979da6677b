// The HTTP client's insides (client.hpp), shared by its two source files: client.cpp (pools of
// kept-alive connections, the request and its answer, the adaptive limit's permits) and
// client_connect.cpp (name lookups, connects with their retries, TLS). Internal to the client.
#pragma once

#include <dibs/http/client.hpp>
#include "connection.hpp"
#include "connect_window.hpp"
#include "connection_slots.hpp"
#include "endpoint_refresh.hpp"
#include "exchange_io.hpp"
#include "straggler_watch.hpp"
#include <dibs/http/origin_limits.hpp>

#include "engine/src/async_event.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dibs::http {

namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;
using steady = std::chrono::steady_clock;
using endpoint_list = std::shared_ptr<const std::vector<tcp::endpoint>>;

struct host_pool {
  // Replaced whole by each lookup, never changed: a connect loop keeps its copy alive.
  endpoint_list endpoints;
  endpoint_freshness freshness;
  bool resolving = false;     // one lookup at a time; the others wait for it on `resolved`
  std::uint64_t lookups = 0;  // finished lookups, so a waiter knows one ended
  response failed_lookup;     // why the last lookup failed (its ec is clear when it did not)
  std::unique_ptr<async_event> resolved = std::make_unique<async_event>();
  // client_options::adaptive: the origin's limit (the run's, shared by every shard's client).
  // Declared before `idle`: a connection that answered tells it when it goes (connection::
  // served_by), and without figures this pool holds the limit's only reference.
  std::shared_ptr<origin_limit> limit;
  // The connections open (each holds a slot for its life): this client's share of the origin's
  // bound while the server takes no more connections (connections_to_keep), else no bound.
  // Declared before `idle`: its connections give their slots back as they go.
  connection_slots opened{no_connection_cap};
  // Oldest first (each goes back with the time it went back): expired ones are cut from the
  // front, the warmest is taken from the back.
  std::vector<std::unique_ptr<connection>> idle;
  // While the origin's connections are bounded (origin_limit::connection_cap), idle ones are
  // closed a straggler's lateness after they went idle (close_idle_while_bounded).
  std::unique_ptr<net::steady_timer> idle_sweep;
  bool idle_sweep_armed = false;
  connection_slots slots;  // max_connections
  // "Host: ...\r\nUser-Agent: ...\r\nAccept: application/json\r\n": the same for every request.
  std::string fixed_headers;
  std::string key;  // "http://host:port": its name where limits are kept
  // this client's permits, its share of the origin's limit (one per request in flight).
  connection_slots permits;
  // The requests holding permits, oldest first, and the one timer that wakes when the oldest
  // is due to turn straggler (straggler_watch.hpp); the stragglers run beside the limit.
  straggler_queue watched;
  std::unique_ptr<net::steady_timer> sweep;
  bool sweep_armed = false;
  std::size_t stragglers = 0;
  straggler_share straggled;  // of the requests watched lately, the share that turned straggler
  // With the adaptive limit: new connections paced (connect_window.hpp), this client's share of
  // the window; a request holds one of these from before it opens a connection until its answer.
  connect_window new_connections;
  connection_slots unproven;
  // The origin's limit and ceiling the permits and unproven slots were last sized for
  // (sync_permits): a send whose origin's limit has not moved costs two loads, not the sizing.
  std::size_t synced_limit = 0;
  std::size_t synced_calling = 0;  // ... and the shards still sending
  std::size_t synced_cap = 0;      // ... and the bound on its connections (origin_limit::connection_cap)
  std::size_t synced_parked = 0;   // ... and the parked shards' calls (origin_limit::parked_call)
  double synced_ceiling = -1;
  // Moving averages of the time to first byte (for the check of a new connection's request) and
  // of the time to connect (for the bound on a connect whose SYN a full backlog dropped).
  std::chrono::microseconds first_byte_avg{0};
  std::chrono::microseconds connect_avg{0};
};

// One request's hold on its origin's adaptive limit, until it ends however it ends: its permit,
// counted among the requests in flight; or, once it turned straggler, counted apart.
struct limit_hold : straggler_entry {
  limit_hold() = default;
  limit_hold(const limit_hold&) = delete;
  limit_hold& operator=(const limit_hold&) = delete;
  ~limit_hold();
  connection_slots::held permit;
  host_pool* pool = nullptr;  // set once it counts in the origin's requests in flight ...
  bool straggler = false;     // ... or, from then on, among its stragglers
  bool first_on_connection = false;  // its request is its connection's first (unserved_connection) ...
  bool late_first = false;           // ... and was found late
  bool parked = false;               // taken on a parked shard's floor (origin_limit::parked_call)
};

// The key of `to`'s pool: "http://host:port".
inline std::string pool_key(const origin& to) {
  return (to.tls ? "https://" : "http://") + to.host + ":" + std::to_string(to.port);
}

struct client::impl {
  impl(net::any_io_executor e, client_options o) : ex(std::move(e)), opts(std::move(o)), resolver(ex) {}

  // Expires with the client: what a timer's handler run after it went looks at first.
  std::shared_ptr<const char> alive = std::make_shared<const char>('\0');
  // How late this client's event loop runs its handlers (adaptive_limit::client_delay): a timer
  // every loop_lag_every while calls run, its lateness reported to every origin's limit.
  static constexpr std::chrono::milliseconds loop_lag_every{5};
  std::unique_ptr<net::steady_timer> lag_timer;
  bool lag_armed = false;
  std::size_t busy = 0;  // calls under way (send)
  struct busy_mark {
    explicit busy_mark(impl& c);
    ~busy_mark();
    busy_mark(const busy_mark&) = delete;
    busy_mark& operator=(const busy_mark&) = delete;
    impl& c_;
  };
  void watch_loop_lag();

  // The TLS context, made on the first HTTPS request (loading the system's CAs takes a while).
  ssl::context* tls_context(response& res);

  // TLS on a connected socket: SNI, then the certificate chain and the host name (or address)
  // checked by OpenSSL itself, so a refusal says why ("hostname mismatch", "unable to get local
  // issuer certificate").
  awaitable<bool> handshake(connection& c, const std::string& host, response& res);

  // The pool of `to`, its addresses looked up when due; nullptr (and `res` says why) when the
  // name does not resolve or TLS can't be set up.
  awaitable<host_pool*> pool_for(const origin& to, response& res);

  // A new connection to `to` (TCP, then TLS when asked), or nullptr and `res` says why.
  // `accepted` (may be empty): called once, during a TLS handshake, when the server's kernel
  // acknowledges its first flight (exchange_io.hpp: acknowledgement_watch).
  awaitable<std::unique_ptr<connection>> open(const origin& to, host_pool& pool, steady::time_point deadline,
                                              response& res, std::function<void()> accepted = {});

  // The warmest idle connection that has not been idle for idle_timeout, or nullptr; older ones
  // are closed (the server is about to close them, or has).
  std::unique_ptr<connection> take_idle(host_pool& pool);

  void keep_idle(host_pool& pool, std::unique_ptr<connection> c);

  // The pool of `to`, or nullptr before its first request.
  host_pool* find_pool(const origin& to);

  // The pool of `to` when it is the last one used and needs no lookup: no coroutine for the
  // common case of a processor calling its one origin.
  host_pool* ready_pool(const origin& to);

  // A slot of the pool's max_connections (at once when one is free); false when the wait was
  // cancelled, and `res` says so.
  awaitable<bool> take_slot(host_pool& pool, connection_slots::held& slot, response& res);

  awaitable<response> probe(origin to);

  // The request as it goes on the wire: what Beast's serializer wrote for the same request
  // (Host, User-Agent, Accept; Content-Type and Content-Length for a POST), in one buffer.
  static std::string request_bytes(const host_pool& pool, request& spec);

  awaitable<response> send(origin to, request spec);

  // An answer came: its time to first byte feeds the limit and the new-connection check's bound;
  // 429 and 503 are refusals for the API's rate (the pace's), 502 and 504 overload.
  // `straggler`: its request ran beside the limit (its latency is no sample of the server's load).
  void observe_answer(host_pool& pool, const response& res, std::chrono::microseconds first_byte, bool straggler);

  void observe_failure(host_pool& pool, const boost::system::error_code& ec);

  // A request that holds a permit waits in its pool's straggler queue from its first exchange
  // (straggler_watch.hpp); the pool's timer turns the late ones into stragglers: their permits
  // go to the next requests, and the engine hears there is room.
  void watch_straggler(host_pool& pool, limit_hold& hold);
  void arm_sweep(host_pool& pool, steady::time_point at);
  // Where the server serves only the connections it holds (the bound of connections_to_keep), a
  // connection this client keeps idle holds one of them from another shard's calls (Apache's
  // prefork keeps a worker on it until it has been idle a second): closed once idle a straggler's
  // lateness (a shard whose items ran out kept 8 of 8 workers idle while the other's calls
  // waited in the listen queue, 8 idle closes and a second lost in a run of two).
  void close_idle_while_bounded(host_pool& pool);
  void arm_idle_sweep(host_pool& pool, steady::time_point at);
  void sweep_stragglers(host_pool& pool);
  // The bound on the origin's open connections decided again (connections_to_keep), and this
  // client's share of it.
  void bound_connections(host_pool& pool);
  void sync_opened(host_pool& pool);

  void observe_overload(host_pool& pool, limit_signal why);
  // A new connection's SYN or request went unanswered (a full listen backlog): counted, a signal
  // to the limit, and the pace of new connections halved (connect_window.hpp).
  // `opened`: when the connection's connect began.
  void handshake_dropped(host_pool& pool, steady::time_point opened);

  // This client's share of its origin's limit (limit_share), at least one: a parked shard still
  // runs what it holds.
  // The limit goes to the shards still sending (origin_limit::shard_gone): when the first shard's
  // dispatcher ended, the others took its part; by index alone a run's tail ran one call at a
  // time on a shard that the split had left none.
  // The calling shards share the limit less the parked shards' calls on their floor.
  std::size_t share_of(const origin_limit& l) const {
    const auto p = l.place_of(opts.shard, opts.shards);
    return std::max<std::size_t>(1, limit_share(l.limit(), p.calling, p.rank, most_per_shard(l.ceiling()), l.parked_calls()));
  }
  // Whether this client's shard is parked for `l` (its share of the limit 0).
  bool parked_for(const origin_limit& l) const {
    const auto p = l.place_of(opts.shard, opts.shards);
    return limit_share(l.limit(), p.calling, p.rank, most_per_shard(l.ceiling())) == 0;
  }
  // How many shards run calls of `l` now (calling_shards): new connections are paced among them.
  std::size_t calling_of(const origin_limit& l) const {
    return calling_shards(l.limit(), l.place_of(opts.shard, opts.shards).calling, most_per_shard(l.ceiling()));
  }
  // The most calls a shard may run of one origin's limit whose ceiling is `ceiling`: its part of
  // that ceiling (the engine's concurrency over the shards) and opts.most_per_shard. Computed
  // alike on every shard (the ceiling is the origin's, shared), so they agree on which call.
  std::size_t most_per_shard(double ceiling) const {
    const auto shards = std::max<std::size_t>(1, opts.shards);
    std::size_t most = std::max<std::size_t>(1, static_cast<std::size_t>(ceiling) / shards);
    if (opts.most_per_shard > 0) most = std::min(most, opts.most_per_shard);
    return most;
  }
  // This client's share of the ceiling of every origin's limit (concurrency).
  std::size_t ceiling_share() const {
    return connection_share(static_cast<std::size_t>(opts.adaptive->max), opts.shards, opts.shard);
  }

  // The permits follow the origin's limit, which any shard's client may have moved.
  void sync_permits(host_pool& pool);
  // The slots of new connections follow the pool's window (this client's share of it).
  void sync_unproven(host_pool& pool);
  // A refusal for the API's load (429/503 saying nothing of when to come back), whose permit is
  // kept as long as an answer usually takes (keep_refused_permit).
  static bool refused_for_load(const response& res);
  awaitable<void> keep_refused_permit(host_pool& pool, std::chrono::microseconds first_byte);
  // A new connection's request was acknowledged (or answered): its slot among the unproven goes.
  void prove_connection(host_pool& pool, connection_slots::held& unproven, bool paced);
  // Waits for a turn at its origin's pace, when the origin has one (every shard's client takes
  // the same origin's turns), and counts the request as sent; false when the wait was cancelled,
  // and `res` says so.
  awaitable<bool> keep_pace(host_pool& pool, response& res);
  // Waits for a slot to open a new connection in (with the adaptive limit); false when cancelled.
  // Waits for the pace of new connections: a slot to open one, or woken for a kept-alive one.
  awaitable<connection_slots::wait_end> take_unproven(host_pool& pool, connection_slots::held& slot, response& res);
  // Waits for a place among the pool's open connections (host_pool::opened, bounded); `idle`
  // (a first attempt's): a kept-alive connection given back meanwhile is taken instead, and
  // the wait ends with it there and no place held.
  awaitable<connection_slots::wait_end> wait_to_open(host_pool& pool, limit_hold& hold, connection_slots::held& slot,
                                                      response& res, std::unique_ptr<connection>* idle);

  // A round trip's decision was made (by this client's answer): the permits follow, the engine
  // hears of a change, and the operator of a decrease the API caused.
  void limit_decided(host_pool& pool, const origin_limit::decision& d);

  // A kept-alive connection the server had closed before the request reached it (no byte of it
  // acknowledged): the request goes again, once, on a new connection (the next idle one is as
  // likely dead).
  bool stale_retry(const response& res, int attempt, const exchange_result& x);

  static constexpr int max_dropped_handshakes = 3;
  static constexpr int max_quick_connects = 3;

  net::any_io_executor ex;
  client_options opts;
  tcp::resolver resolver;
  std::optional<ssl::context> tls_ctx;
  std::unordered_map<std::string, host_pool> pools;
  origin last_origin;
  host_pool* last_pool = nullptr;
  client_stats stats;

};

}  // namespace dibs::http
