// What the client tells an origin's limit, and what it does with the limit's answers: refusals
// and their held permits, connections proven on acknowledgement, the event loop's own lateness,
// stragglers and their sweep, what an answer or a failure says, the permits and new-connection
// share kept in step with the limit, the pace's turns. client.cpp moves the requests.
#include "client_impl.hpp"

#include "limit_signals.hpp"
#include "straggler_watch.hpp"
#include "tcp_signals.hpp"

#include <dibs/http/http_figures.hpp>
#include <dibs/http/rate_limiter.hpp>
#include <dibs/log.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace dibs::http {

bool client::impl::refused_for_load(const response& res) {
  return (res.status == 429 || res.status == 503) && !says_when_to_return(res.status, res.headers);
}

awaitable<void> client::impl::keep_refused_permit(host_pool& pool, std::chrono::microseconds first_byte) {
  // Each refusal is an item's attempt: held (refused_permit_hold), the permit is refused no faster
  // than the limit's own requests are answered (the simulated APIs: a quarter of the calls
  // refused against a cap of 32 at once without it).
  const auto hold = refused_permit_hold(pool.limit->typical_latency());
  if (hold <= first_byte) co_return;
  net::steady_timer timer(ex, hold - first_byte);
  co_await timer.async_wait(net::as_tuple(net::use_awaitable));  // cancelled: the call ends now
}

void client::impl::prove_connection(host_pool& pool, connection_slots::held& unproven, bool paced) {
  // The server accepts connections this fast: the window may grow (connect_window.hpp).
  pool.new_connections.proven(paced || pool.unproven.in_use() >= pool.unproven.limit(), pool.limit->limit());
  unproven.reset();
  sync_unproven(pool);
}

client::impl::busy_mark::busy_mark(impl& c) : c_(c) {
  if (c_.busy++ == 0 && c_.opts.adaptive) c_.watch_loop_lag();
}

client::impl::busy_mark::~busy_mark() { --c_.busy; }

void client::impl::watch_loop_lag() {
  if (lag_armed) return;
  if (!lag_timer) lag_timer = std::make_unique<net::steady_timer>(ex);
  lag_armed = true;
  const auto due = steady::now() + loop_lag_every;
  lag_timer->expires_at(due);
  lag_timer->async_wait([this, due, client_alive = std::weak_ptr<const char>(alive)](const boost::system::error_code& ec) {
    if (ec || client_alive.expired()) return;
    lag_armed = false;
    const auto late = std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - due);
    for (auto& [key, pool] : pools)
      if (pool.limit) pool.limit->client_delay(late);
    if (busy > 0) watch_loop_lag();  // idle: no timer left to keep the io_context running
  });
}

void client::impl::watch_straggler(host_pool& pool, limit_hold& hold) {
  hold.since = steady::now();
  pool.watched.push(hold);
  pool.straggled.sent();
  // Earlier than the sweep's wake-up when the origin's usual answer got faster meanwhile.
  const auto due = hold.since + straggler_after(pool.limit->typical_latency());
  if (!pool.sweep_armed || due < pool.sweep->expiry()) arm_sweep(pool, due);
}

void client::impl::arm_sweep(host_pool& pool, steady::time_point at) {
  if (!pool.sweep) pool.sweep = std::make_unique<net::steady_timer>(ex);
  pool.sweep_armed = true;
  pool.sweep->expires_at(at);  // a wait under way ends aborted, and does nothing
  // A wait that ended before the client went is still run: `alive` says whether the client
  // (and the pool) are there.
  pool.sweep->async_wait([this, &pool, client_alive = std::weak_ptr<const char>(alive)](const boost::system::error_code& ec) {
    if (!ec && !client_alive.expired()) sweep_stragglers(pool);
  });
}

void client::impl::arm_idle_sweep(host_pool& pool, steady::time_point at) {
  if (!pool.idle_sweep) pool.idle_sweep = std::make_unique<net::steady_timer>(ex);
  pool.idle_sweep_armed = true;
  pool.idle_sweep->expires_at(at);
  pool.idle_sweep->async_wait([this, &pool, client_alive = std::weak_ptr<const char>(alive)](const boost::system::error_code& ec) {
    if (!ec && !client_alive.expired()) close_idle_while_bounded(pool);
  });
}

void client::impl::close_idle_while_bounded(host_pool& pool) {
  pool.idle_sweep_armed = false;
  // The bound as it is now (another shard may have lifted it: its waiters here are granted).
  sync_opened(pool);
  if (pool.opened.limit() == no_connection_cap) return;  // the bound went: idle ones wait for calls as anywhere
  const auto after = straggler_after(pool.limit->typical_latency());
  const auto now = steady::now();
  // Oldest first: those idle that long are cut from the front (their destructors close them).
  const auto fresh = std::find_if(pool.idle.begin(), pool.idle.end(), [&](const auto& c) { return now - c->idle_since < after; });
  stats.expired_idle += static_cast<std::uint64_t>(fresh - pool.idle.begin());
  pool.idle.erase(pool.idle.begin(), fresh);
  if (!pool.idle.empty()) arm_idle_sweep(pool, pool.idle.front()->idle_since + after);
}

void client::impl::sweep_stragglers(host_pool& pool) {
  pool.sweep_armed = false;
  if (pool.watched.empty()) return;
  const auto after = straggler_after(pool.limit->typical_latency());
  const auto now = steady::now();
  if (after.count() == 0) return arm_sweep(pool, now + std::chrono::milliseconds(50));  // nothing known yet
  bool room = true;
  std::size_t released = 0, unserved = 0;
  while (auto* oldest = pool.watched.oldest()) {
    if (oldest->since + after > now) break;
    auto& h = static_cast<limit_hold&>(*oldest);
    if (h.first_on_connection && !h.late_first) {
      h.late_first = true;
      pool.limit->first_request_late();
    }
    if (h.first_on_connection && pool.limit->takes_no_more_connections()) {
      pool.watched.remove(h);  // keeps its permit until its answer
      ++unserved;
      continue;
    }
    room = may_release(pool.stragglers, pool.permits.limit(), ceiling_share(), pool.straggled.share());
    if (!room) break;
    pool.watched.remove(h);
    h.permit.reset();  // to the next request waiting for one
    h.straggler = true;
    ++pool.stragglers;
    pool.straggled.turned();
    pool.limit->ended();
    pool.limit->straggling(+1);
    ++stats.stragglers;
    ++released;
  }
  // No room (as many stragglers as may be): looked at again soon, as one of them may end.
  if (auto* oldest = pool.watched.oldest())
    arm_sweep(pool, room ? oldest->since + after : now + std::min<std::chrono::milliseconds>(after, std::chrono::milliseconds(50)));
  if (unserved > 0) {
    log::debug("API ", pool.key, ": ", unserved, " request(s) on new connections unanswered after ", after.count(),
               " ms keep their permits (so many new connections' first calls are late: the server may take no more connections)");
    limit_decided(pool, pool.limit->connections_unserved(now));
    bound_connections(pool);
  }
  if (released == 0) return;
  log::debug("API ", pool.key, ": ", released, " request(s) unanswered after ", after.count(), " ms run beside the limit (",
             pool.stragglers, " now)");
  if (opts.on_limit_change) opts.on_limit_change();  // room for more items
}

void client::impl::observe_answer(host_pool& pool, const response& res, std::chrono::microseconds first_byte,
                                  bool straggler) {
  pool.first_byte_avg = pool.first_byte_avg.count() == 0 ? first_byte : (pool.first_byte_avg * 3 + first_byte) / 4;
  if (!pool.limit) return;
  // A refusal that says when to come back (Retry-After, X-Rl: 0, RateLimit-Remaining: 0) is that
  // pause's to honor (rate_limiter.hpp): the limit hears a 429's once the pause is taken
  // (exchange_policy.hpp: pause_speaks_of_speed), not here. A bare 429 says nothing of when (the
  // limiter's pause of 1 s for it is its own guess): heard here.
  const bool said_when = (res.status == 429 || res.status == 503) && says_when_to_return(res.status, res.headers);
  limit_decided(pool, pool.limit->answered(first_byte, res.status, said_when, steady::now(), straggler));
}

void client::impl::observe_failure(host_pool& pool, const boost::system::error_code& ec) {
  if (const auto sig = failure_signal(ec); sig != limit_signal::none) observe_overload(pool, sig);
}

void client::impl::handshake_dropped(host_pool& pool, steady::time_point opened) {
  ++stats.dropped_handshakes;
  if (opts.figures) opts.figures->dropped_handshakes.fetch_add(1, std::memory_order_relaxed);
  if (!pool.limit) return;
  const auto now = steady::now();
  limit_decided(pool, pool.limit->overloaded(limit_signal::dropped_handshake, now, opened));
  pool.new_connections.dropped(opened, now);  // too many connects at once, whether the SYN or the request was lost
  sync_unproven(pool);
}

void client::impl::observe_overload(host_pool& pool, limit_signal why) {
  if (pool.limit) limit_decided(pool, pool.limit->overloaded(why, steady::now()));
}

void client::impl::sync_permits(host_pool& pool) {
  const auto limit = pool.limit->limit();
  const auto ceiling = pool.limit->ceiling();
  const auto calling = pool.limit->place_of(opts.shard, opts.shards).calling;
  const auto cap = pool.limit->connection_cap();
  const auto parked = pool.limit->parked_calls();
  if (limit == pool.synced_limit && ceiling == pool.synced_ceiling && calling == pool.synced_calling &&
      cap == pool.synced_cap && parked == pool.synced_parked)
    return;  // sized already
  sync_opened(pool);
  pool.synced_parked = parked;
  pool.synced_limit = limit;
  pool.synced_ceiling = ceiling;
  pool.synced_calling = calling;
  const auto share = share_of(*pool.limit);
  if (share != pool.permits.limit()) pool.permits.set_limit(share);
  sync_unproven(pool);  // the shards calling may have changed with the limit
}

void client::impl::sync_unproven(host_pool& pool) {
  const auto share = connect_share(pool.new_connections.allowed(), calling_of(*pool.limit), opts.shard);
  if (share != pool.unproven.limit()) pool.unproven.set_limit(share);
}

awaitable<bool> client::impl::keep_pace(host_pool& pool, response& res) {
  bool waited = false;
  steady::time_point at;
  while (!pool.limit->take_turn(steady::now(), at)) {
    if (!waited) ++stats.pace_waits;
    waited = true;
    net::steady_timer timer(ex, at);
    const auto [ec] = co_await timer.async_wait(net::as_tuple(net::use_awaitable));
    if (ec) {
      res.ec = net::error::operation_aborted;
      res.stage = "wait for the API's pace";
      co_return false;
    }
  }
  pool.limit->sent(waited);
  co_return true;
}

void client::impl::bound_connections(host_pool& pool) {
  const auto before = pool.limit->connection_cap();
  const auto cap = pool.limit->bound_connections();
  if (cap != before) {
    if (cap == 0)
      log::debug("API ", pool.key, ": new connections' first calls answered in time again: no bound on the connections");
    else
      log::debug("API ", pool.key, ": at most ", cap, " connection(s) kept open, as many as the server served (more "
                 "calls wait for one of them)");
  }
  sync_opened(pool);
}

void client::impl::sync_opened(host_pool& pool) {
  const auto cap = pool.limit->connection_cap();
  pool.synced_cap = cap;
  std::size_t share = no_connection_cap;
  if (cap != 0) {
    // Over the shards the limit gives calls (calling_of), not every live one: a parked shard's
    // share would be connections no call of the others may use.
    share = bound_share(cap, calling_of(*pool.limit), pool.limit->place_of(opts.shard, opts.shards).rank);
  }
  if (share != pool.opened.limit()) pool.opened.set_limit(share);
}

awaitable<connection_slots::wait_end> client::impl::take_unproven(host_pool& pool, connection_slots::held& slot,
                                                                   response& res) {
  ++stats.connect_waits;
  const auto end = co_await pool.unproven.wait(slot);
  if (end == connection_slots::wait_end::cancelled) {
    res.ec = net::error::operation_aborted;
    res.stage = "wait to open a connection (new connections to the API are paced)";
  }
  co_return end;
}

void client::impl::limit_decided(host_pool& pool, const origin_limit::decision& d) {
  sync_permits(pool);
  if (!d.changed) return;
  log::debug("API ", pool.key, ": ", d.detail);
  if (!d.advice.empty()) log::warn(d.advice);
  if (opts.on_limit_change) opts.on_limit_change();
}

}  // namespace dibs::http
