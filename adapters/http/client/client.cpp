#include "client_impl.hpp"

#include <dibs/http/request_shape.hpp>

#include "exchange_io.hpp"
#include <dibs/http/http_figures.hpp>
#include "limit_signals.hpp"
#include <dibs/http/rate_limiter.hpp>
#include "straggler_watch.hpp"
#include "tcp_signals.hpp"

#include <dibs/log.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/asio/ssl/error.hpp>

#include <algorithm>
#include <optional>
#include <strings.h>
#include <tuple>
#include <unordered_map>

namespace dibs::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

std::string response::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (::strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return {};
}

std::string response::describe() const {
  if (ec) return stage + ": " + ec.message() + (detail.empty() ? "" : " (" + detail + ")");
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  return "HTTP " + std::to_string(status) + (reason.empty() ? "" : " " + std::string(reason));
}

namespace {
// A kept-alive connection that the server closed meanwhile fails like this before any byte of
// the answer arrives; the request was not processed, so a GET may be sent again.
bool stale_connection_error(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::eof || ec == ssl::error::stream_truncated;
}

// A request counted in one of its origin's waits (`Count`: waiting for a permit, or, holding
// one, for a connection), however the wait ends (a wait cancelled before it began throws). No
// origin (null): counted nowhere.
template <void (origin_limit::*Count)(int)>
struct wait_mark {
  explicit wait_mark(origin_limit* l) : l_(l) {
    if (l_) (l_->*Count)(+1);
  }
  ~wait_mark() {
    if (l_) (l_->*Count)(-1);
  }
  wait_mark(const wait_mark&) = delete;
  wait_mark& operator=(const wait_mark&) = delete;
  origin_limit* l_;
};
using waiting_mark = wait_mark<&origin_limit::waiting>;
using connection_wait_mark = wait_mark<&origin_limit::connection_waiting>;
using connection_opening_mark = wait_mark<&origin_limit::connection_opening>;
}  // namespace

limit_hold::~limit_hold() {
  if (!pool) return;
  if (parked) pool->limit->parked_call(-1);
  pool->watched.remove(*this);
  if (straggler) {
    --pool->stragglers;
    pool->limit->straggling(-1);
  } else {
    pool->limit->ended();
  }
}

std::unique_ptr<connection> client::impl::take_idle(host_pool& pool) {
  const auto now = steady::now();
  auto fresh = std::find_if(pool.idle.begin(), pool.idle.end(),
                            [&](const auto& c) { return now - c->idle_since < opts.idle_timeout; });
  stats.expired_idle += static_cast<std::uint64_t>(fresh - pool.idle.begin());
  pool.idle.erase(pool.idle.begin(), fresh);  // their destructors close the sockets
  while (!pool.idle.empty()) {
    auto c = std::move(pool.idle.back());
    pool.idle.pop_back();
    // Bytes the server sent while it was idle belong to no request of ours (an extra answer):
    // reading them as the next request's answer would put one item's answer on another.
    boost::system::error_code ec;
    const bool quiet = c->tcp().socket().available(ec) == 0 && !ec;
    // A server that closed it while it was idle: a request on it would be lost (and, with a
    // server that reads what it then discards, cost its item an attempt).
    if (quiet && peer_closed(c->tcp().socket().native_handle())) {
      ++stats.closed_idle;
      continue;
    }
    if (quiet) return c;
    ++stats.unsolicited;
  }
  return nullptr;
}

void client::impl::keep_idle(host_pool& pool, std::unique_ptr<connection> c) {
  if (opts.idle_timeout.count() <= 0 || pool.idle.size() >= opts.max_idle_per_host) return;
  c->tcp().expires_never();
  c->idle_since = steady::now();
  pool.idle.push_back(std::move(c));
  pool.opened.wake_first();  // a request waiting to open one, where the origin takes no more, takes this
  if (pool.limit && pool.opened.limit() != no_connection_cap && !pool.idle_sweep_armed)
    arm_idle_sweep(pool, pool.idle.front()->idle_since + straggler_after(pool.limit->typical_latency()));
  // A request waiting for the pace of new connections takes this one instead: against an API
  // whose handshake is slow (TLS, 50 ms) the pace let 4 connections open a handshake, and a
  // thousand requests waited for it while the connections they could use sat idle.
  pool.unproven.wake_first();
}

host_pool* client::impl::ready_pool(const origin& to) {
  if (!last_pool || to.port != last_origin.port || to.tls != last_origin.tls || to.host != last_origin.host) return nullptr;
  if (to.tls && !tls_ctx) return nullptr;
  if (!last_pool->endpoints || should_resolve(last_pool->freshness, steady::now(), opts.resolve_every)) return nullptr;
  return last_pool;
}

awaitable<bool> client::impl::take_slot(host_pool& pool, connection_slots::held& slot, response& res) {
  ++stats.connection_waits;
  const bool got = co_await pool.slots.wait(slot) == connection_slots::wait_end::slot;
  if (got) co_return true;
  res.ec = net::error::operation_aborted;
  res.stage = "wait for a connection";
  co_return false;
}

awaitable<connection_slots::wait_end> client::impl::wait_to_open(host_pool& pool, limit_hold& hold,
                                                                  connection_slots::held& slot, response& res,
                                                                  std::unique_ptr<connection>* idle) {
  ++stats.connection_waits;
  // (Not a straggler's, on a retry: it no longer counts in flight.)
  const connection_wait_mark waits(hold.straggler ? nullptr : pool.limit.get());
  for (;;) {
    const auto end = co_await pool.opened.wait(slot);
    if (end == connection_slots::wait_end::cancelled) {
      res.ec = net::error::operation_aborted;
      res.stage = "wait for a connection (the API serves no more at once)";
      co_return end;
    }
    if (idle && (*idle = take_idle(pool))) {
      slot.reset();
      co_return end;
    }
    if (end == connection_slots::wait_end::slot) co_return end;
    // Woken for a connection that another request took first: a place freed meanwhile is taken
    // (the queue was empty when it was given back), else wait again.
    if (pool.opened.try_take(slot)) co_return connection_slots::wait_end::slot;
  }
}

awaitable<response> client::impl::probe(origin to) {
  response res;
  host_pool* pool = co_await pool_for(to, res);
  if (!pool) co_return res;
  connection_slots::held slot;
  if (!pool->slots.try_take(slot)) {  // no co_await inside a condition (g++ 12)
    const bool got = co_await take_slot(*pool, slot, res);
    if (!got) co_return res;
  }
  connection_slots::held open_slot;
  pool->opened.try_take(open_slot);  // counted among the open ones (no bound holds before a run's calls)
  const auto opening = steady::now();
  const auto deadline = opening + opts.connect_timeout;
  auto c = co_await open(to, *pool, deadline, res);
  if (c) c->open_slot = std::move(open_slot);
  if (c && opts.figures) opts.figures->handshake_s.record(std::chrono::duration<double>(steady::now() - opening).count());
  if (c) keep_idle(*pool, std::move(c));
  co_return res;
}

namespace {
// Whether the header lines `lines` ("Name: value\r\n"...) name `name` (case-insensitive).
bool names_header(std::string_view lines, std::string_view name) {
  for (std::size_t at = 0; at < lines.size();) {
    const auto end = lines.find("\r\n", at);
    const auto line = lines.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.size() > name.size() && line[name.size()] == ':' && ::strncasecmp(line.data(), name.data(), name.size()) == 0)
      return true;
    if (end == std::string_view::npos) break;
    at = end + 2;
  }
  return false;
}

// dibs's own header lines, less those the user's headers give (a user's Accept, User-Agent
// replaces dibs's: two of either would be sent otherwise).
void append_own_headers(std::string& wire, std::string_view own, std::string_view user) {
  if (user.empty()) {
    wire += own;
    return;
  }
  for (std::size_t at = 0; at < own.size();) {
    const auto end = own.find("\r\n", at);
    const auto line = own.substr(at, end - at + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !names_header(user, line.substr(0, colon))) wire += line;
    at = end + 2;
  }
}
}  // namespace

std::string client::impl::request_bytes(const host_pool& pool, request& spec) {
  const bool post = spec.method != request::verb::get;  // a method with a body
  std::string wire;
  wire.reserve(32 + spec.target.size() + pool.fixed_headers.size() + spec.headers.size() +
               (post ? 80 + spec.content_type.size() + spec.body.size() : 0));
  wire += method_name(spec.method);
  wire += ' ';
  wire += spec.target;
  wire += " HTTP/1.1\r\n";
  append_own_headers(wire, pool.fixed_headers, spec.headers);
  wire += spec.headers;
  if (post) {
    if (spec.headers.empty() || !names_header(spec.headers, "Content-Type")) {
      wire += "Content-Type: ";
      wire += spec.content_type.empty() ? std::string_view("application/json") : std::string_view(spec.content_type);
      wire += "\r\n";
    }
    wire += "Content-Length: ";
    wire += std::to_string(spec.body.size());
    wire += "\r\n";
  }
  wire += "\r\n";
  if (post) wire += spec.body;
  return wire;
}

awaitable<response> client::impl::send(origin to, request spec) {
  response res;
  ++stats.requests;
  host_pool* found = ready_pool(to);
  if (!found) found = co_await pool_for(to, res);
  if (!found) co_return res;
  auto& pool = *found;
  const auto called = steady::now();  // the wait for a connection counts from here (http_figures)
  const busy_mark busy(*this);  // the loop's lateness is watched while calls run (watch_loop_lag)
  // The adaptive limit's permit, then a connection (max_connections): waiting for either is
  // not part of the request's time.
  limit_hold hold;
  if (pool.limit) {
    sync_permits(pool);
    if (!pool.permits.try_take(hold.permit)) {  // no co_await inside a condition (g++ 12)
      ++stats.limit_waits;
      const waiting_mark waits(pool.limit.get());
      const bool got = co_await pool.permits.wait(hold.permit) == connection_slots::wait_end::slot;
      if (!got) {
        res.ec = net::error::operation_aborted;
        res.stage = "wait for the API's concurrency limit";
        co_return res;
      }
    }
    pool.limit->started(pool.permits.waiting());
    hold.pool = &pool;
    if (parked_for(*pool.limit)) {  // on a parked shard's floor: out of the calling shards' shares
      hold.parked = true;
      pool.limit->parked_call(+1);
    }
    // Unpaced (every API until it refuses for its rate): no coroutine frame per request.
    if (pool.limit->pace() <= 0) {
      pool.limit->sent(false);
    } else {
      const bool paced = co_await keep_pace(pool, res);
      if (!paced) co_return res;
    }
  }
  connection_slots::held slot;
  if (!pool.slots.try_take(slot)) {
    const connection_wait_mark waits(pool.limit.get());
    const bool got = co_await take_slot(pool, slot, res);
    if (!got) co_return res;
  }
  auto deadline = steady::now() + opts.request_timeout;
  const std::string wire = request_bytes(pool, spec);
  if (spec.on_send && !spec.on_send()) {
    res.ec = net::error::operation_aborted;
    res.stage = "not sent";
    co_return res;
  }

  int dropped = 0;
  for (int attempt = 0;; ++attempt) {
    // After a stale or dropped connection, a new one: the other idle ones are as old, and
    // likely as dead.
    std::unique_ptr<connection> c = attempt == 0 ? take_idle(pool) : nullptr;
    res.reused = c != nullptr;
    connection_slots::held unproven;
    connection_slots::held open_slot;  // its place among the pool's open connections, once opened
    bool paced = false;  // this connection waited for the window (it was full)
    if (c) {
      ++stats.reuses;
    } else {
      if (!pool.opened.try_take(open_slot)) {  // the origin takes no more connections (connections_to_keep)
        const auto end = co_await wait_to_open(pool, hold, open_slot, res, attempt == 0 ? &c : nullptr);
        if (end == connection_slots::wait_end::cancelled) co_return res;
        deadline = steady::now() + opts.request_timeout;  // (as for the pace below)
        if (c) {
          res.reused = true;
          ++stats.reuses;
        }
      }
      if (!c && pool.limit && !pool.unproven.try_take(unproven)) {  // no co_await inside a condition (g++ 12)
        paced = true;
        // (Not a straggler's, on a retry: it no longer counts in flight.)
        const connection_wait_mark waits(hold.straggler ? nullptr : pool.limit.get());
        for (;;) {
          const auto end = co_await take_unproven(pool, unproven, res);
          if (end == connection_slots::wait_end::cancelled) co_return res;
          // Waiting for our own pace is no part of the request's time (as for the permit and
          // the connection slot): behind a slow API it would time requests out that never went
          // out, and the timeouts would lower the limit as if the API were overloaded.
          deadline = steady::now() + opts.request_timeout;
          // Meanwhile another request gave a kept-alive connection back (and woke us for it):
          // taken rather than opening one, whose handshake may cost more than the request.
          if (attempt == 0 && (c = take_idle(pool))) {
            res.reused = true;
            ++stats.reuses;
            unproven.reset();
            open_slot.reset();
            break;
          }
          if (end == connection_slots::wait_end::slot) break;
          // Woken for a connection that another request took first: a slot freed meanwhile is
          // taken (the queue was empty when it was given back), else wait again.
          if (pool.unproven.try_take(unproven)) break;
        }
      }
    }
    steady::duration handshake{0};
    steady::time_point opened_at{};  // a new connection's connect began
    if (!c) {
      const auto opening = steady::now();
      opened_at = opening;
      const connection_opening_mark opens(hold.pool && !hold.straggler ? pool.limit.get() : nullptr);
      // Over TLS the connection is proven once its first flight is acknowledged, before the
      // handshake's end (exchange_io.hpp: acknowledgement_watch).
      std::function<void()> accepted;
      if (unproven && to.tls) accepted = [this, &pool, &unproven, paced] { prove_connection(pool, unproven, paced); };
      c = co_await open(to, pool, deadline, res, std::move(accepted));
      if (!c) {
        observe_failure(pool, res.ec);
        co_return res;
      }
      handshake = steady::now() - opening;
      c->open_slot = std::move(open_slot);
      if (pool.limit) pool.limit->connection_opened(std::chrono::duration_cast<std::chrono::microseconds>(c->open_took));
      if (opts.figures) opts.figures->handshake_s.record(std::chrono::duration<double>(handshake).count());
    }
    // The call's wait for a connection to write on, once (a second attempt's is the first's).
    if (attempt == 0 && opts.figures)
      opts.figures->connection_wait_s.record(std::max(0.0, std::chrono::duration<double>(steady::now() - called - handshake).count()));

    c->tcp().expires_at(deadline);
    // (None over TLS: its handshake's end proved the server took the connection.)
    const auto check_after = res.reused || c->tls ? std::chrono::milliseconds(0) : first_byte_check_after(pool.first_byte_avg);
    hold.first_on_connection = !res.reused;
    if (pool.limit && hold.first_on_connection) pool.limit->new_connection_sent(opened_at);
    if (hold.permit && !hold.queued && !hold.straggler) watch_straggler(pool, hold);
    // A new connection is proven once the server's kernel acknowledges its request (the backlog
    // took it), not once its answer comes: against an API answering in 500 ms, proving by answers
    // let a few connections open per round trip, and a thousand took twenty seconds.
    std::function<void()> acknowledged;
    if (unproven) acknowledged = [this, &pool, &unproven, paced] { prove_connection(pool, unproven, paced); };
    if (spec.on_wire) spec.on_wire(res.reused);
    const auto x = co_await exchange(*c, wire, res, opts.max_body, check_after, std::move(acknowledged));
    stats.interim_answers += static_cast<std::uint64_t>(x.interim);
    if (x.dropped && dropped < max_dropped_handshakes && steady::now() < deadline) {
      ++dropped;
      log::debug("API ", pool.key, ": a new connection's request was not acknowledged in ", check_after.count(),
                 " ms (the server's backlog is full); sending it again on another");
      unproven.reset();
      if (pool.limit) pool.limit->new_connection_unsent(opened_at);
      handshake_dropped(pool, opened_at);
      continue;
    }
    if (x.ec) {
      if (stale_retry(res, attempt, x)) continue;
      res.ec = x.dropped ? net::error::timed_out : x.ec;
      res.stage = x.dropped ? "connect (the server accepted no connection: its backlog is full)"
                            : x.written ? "read" : "write";
      observe_failure(pool, res.ec);
      co_return res;
    }
    // Bytes after the answer belong to no request: such a connection is not used again.
    const bool keep = c->reader->keep_alive() && c->buffer.size() == 0;
    if (!keep && pool.limit) pool.limit->closed_after_answer();  // before the answer is heard: the limit reads both
    // Counted among the served ones while it stays open (one the answer closes would be counted
    // and uncounted at once: two atomic writes a call against HTTP/1.0); a probe()'s connection
    // answers its first on reuse.
    if (pool.limit && keep && !c->served_by) {
      c->served_by = pool.limit.get();
      pool.limit->connection_served(+1);
    }
    if (pool.limit && hold.first_on_connection) {
      pool.limit->first_request_answered(opened_at, hold.late_first);
      if (pool.limit->connection_cap() != 0) bound_connections(pool);  // more served, or in time again
    }
    observe_answer(pool, res, x.first_byte, hold.straggler);
    if (unproven) prove_connection(pool, unproven, paced);  // answered before the look found it acknowledged
    if (c->buffer.size() > 0) ++stats.unsolicited;
    c->reader.reset();
    if (keep) keep_idle(pool, std::move(c));
    if (hold.permit && refused_for_load(res)) {
      slot.reset();  // the connection is back in the pool (or closed) before the slot goes back
      co_await keep_refused_permit(pool, x.first_byte);
    }
    co_return res;  // the connection is back in the pool (or closed) before the slot goes back
  }
}

bool client::impl::stale_retry(const response& res, int attempt, const exchange_result& x) {
  // Only a request that provably never reached the server goes again: a server that read it and
  // closed without answering (a crash, a proxy's idle timeout racing it) may have done the work
  // and billed it; that is an attempt that failed, under the item's attempts.
  if (!res.reused || attempt != 0 || !x.nothing_received || !x.unreceived || !stale_connection_error(x.ec)) return false;
  --stats.reuses;
  ++stats.stale_retries;
  return true;
}

client::client(net::any_io_executor ex, client_options opts)
    : impl_(std::make_unique<impl>(std::move(ex), std::move(opts))) {}
client::~client() = default;

awaitable<response> client::send(origin to, request req) { return impl_->send(std::move(to), std::move(req)); }

awaitable<response> client::probe(origin to) { return impl_->probe(std::move(to)); }

awaitable<response> client::get(origin to, std::string target) {
  request req;
  req.target = std::move(target);
  return impl_->send(std::move(to), std::move(req));
}

const client_stats& client::stats() const { return impl_->stats; }
const client_options& client::options() const { return impl_->opts; }
std::vector<tcp::endpoint> client::endpoints(const origin& to) const {
  const auto* pool = impl_->find_pool(to);
  if (!pool || !pool->endpoints) return {};
  return *pool->endpoints;
}

host_pool* client::impl::find_pool(const origin& to) {
  if (last_pool && to.port == last_origin.port && to.tls == last_origin.tls && to.host == last_origin.host)
    return last_pool;
  auto p = pools.find(pool_key(to));
  return p == pools.end() ? nullptr : &p->second;
}

void client::api_paused(const origin& to, int status, std::chrono::milliseconds wait, std::chrono::microseconds latency) {
  auto* pool = impl_->find_pool(to);
  if (!pool || !pool->limit) return;
  impl_->limit_decided(*pool, pool->limit->paused_by_api(status, wait, latency, steady::now()));
}

void client::drop_idle(const origin& to) {
  auto* pool = impl_->find_pool(to);
  if (!pool || pool->idle.empty()) return;
  impl_->stats.out_of_step += pool->idle.size();
  pool->idle.clear();  // their destructors close the sockets
}

std::size_t client::limit(const origin& to) const {
  if (!impl_->opts.adaptive) return 0;
  const host_pool* pool = impl_->find_pool(to);
  if (!pool || !pool->limit)  // before the first request: the limit it will start from
    return std::max<std::size_t>(1, limit_share(adaptive_limit(*impl_->opts.adaptive, steady::now()).limit(),
                                                impl_->opts.shards, impl_->opts.shard,
                                                impl_->most_per_shard(impl_->opts.adaptive->max)));
  return impl_->share_of(*pool->limit) + pool->stragglers;
}

bool client::requests_scarce(const origin& to) const {
  if (!impl_->opts.adaptive) return true;
  const host_pool* pool = impl_->find_pool(to);
  return pool && pool->limit && pool->limit->requests_scarce();
}

bool client::parked(const origin& to) const {
  if (!impl_->opts.adaptive || impl_->opts.shards <= 1) return false;
  const host_pool* pool = impl_->find_pool(to);
  const origin_limit* shared = pool && pool->limit ? pool->limit.get() : nullptr;
  std::shared_ptr<origin_limit> theirs;
  if (!shared && impl_->opts.figures) {  // a shard that has sent nothing yet reads the others' limit
    theirs = impl_->opts.figures->limits.get(pool_key(to), *impl_->opts.adaptive);
    shared = theirs.get();
  }
  if (!shared)
    return limit_share(adaptive_limit(*impl_->opts.adaptive, steady::now()).limit(), impl_->opts.shards, impl_->opts.shard,
                       impl_->most_per_shard(impl_->opts.adaptive->max)) == 0;
  const auto p = shared->place_of(impl_->opts.shard, impl_->opts.shards);
  return limit_share(shared->limit(), p.calling, p.rank, impl_->most_per_shard(shared->ceiling())) == 0;
}

void client::leave(const origin& to) {
  if (!impl_->opts.adaptive || !impl_->opts.figures) return;
  const auto l = impl_->opts.figures->limits.get(pool_key(to), *impl_->opts.adaptive);
  l->shard_gone(impl_->opts.shard);
}

void client::set_ceiling(std::size_t ceiling) {
  if (!impl_->opts.adaptive) return;
  const double total = static_cast<double>(ceiling);  // the origin's, for every shard
  impl_->opts.adaptive->max = total;
  for (auto& [key, pool] : impl_->pools)
    if (pool.limit) impl_->limit_decided(pool, pool.limit->set_max(total));
}

std::size_t client::idle_connections() const {
  std::size_t n = 0;
  for (const auto& [k, p] : impl_->pools) n += p.idle.size();
  return n;
}

}  // namespace dibs::http
