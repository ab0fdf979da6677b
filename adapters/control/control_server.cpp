// What each endpoint of the controls answers (control_server.hpp); how connections are taken
// and read is control_session.cpp's.
#include <dibs/control/control_server.hpp>

#include "control_json.hpp"
#include "control_server_impl.hpp"
#include "dashboard_page.hpp"
#include <dibs/http/http_figures.hpp>
#include "adapters/http/budget/budget_figures.hpp"
#include "run_progress.hpp"

#include "engine/src/close_on_exec.hpp"
#include "engine/src/json_text.hpp"
#include <dibs/log.hpp>
#include <dibs/metrics_text.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <stdexcept>

namespace dibs::http {

namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using answer = control_server::impl::answer;

control_server::impl::impl(net::io_context& i, engine& e, control_options o)
    : ioc(i), eng(e), opts(std::move(o)), acceptor(i), sampler(i),
      slots(opts.max_connections, opts.max_connections_per_peer) {
  access.token = make_control_token();
  access.key = opts.key;
}

// The run's cumulative figures now, for the history's next sample.
run_reading control_server::impl::reading() const {
  const auto& f = eng.figures();
  run_reading r;
  r.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  r.outcomes = load(f.completed) + load(f.failed);
  if (const auto* h = f.extras.find<http_figures>()) {
    r.requests = h->exchanges();
    r.throttled = h->throttled.load(std::memory_order_relaxed);
    const auto& lat = h->api_latency_s;
    std::uint64_t below = 0;
    for (std::size_t i = 0; i <= lat.size(); ++i) {
      if (i < lat.size()) r.latency_bounds.push_back(lat.bound(i));
      const auto upto = lat.cumulative(i);
      r.latency_counts.push_back(upto - below);
      below = upto;
    }
  }
  return r;
}

// One reading a second for the dashboard's charts, from start() until stop().
awaitable<void> control_server::impl::sample_loop() {
  auto self = shared_from_this();
  while (!stopped) {  // stop() may come before this coroutine first runs
    history.add(reading());
    sampler.expires_after(std::chrono::seconds(1));
    auto [ec] = co_await sampler.async_wait(net::as_tuple(net::use_awaitable));
    if (ec) co_return;
  }
}

// The store's counts (a full count on some stores), its lease holders and its failure reasons:
// each fetched at most once per stats_max_age (cached_fetch.hpp). The admin calls block, so
// they run on a thread of their own, never on this io_context's.
awaitable<std::optional<store_stats>> control_server::impl::store_counts() {
  return counts.get(opts.stats_max_age, opts.request_timeout, [this] { return eng.the_store().stats(); });
}
awaitable<std::optional<std::vector<lease_holder>>> control_server::impl::store_holders() {
  return holders.get(opts.stats_max_age, opts.request_timeout,
                     [this] { return offload(admin_pool, [a = opts.admin] { return a->lease_holders(); }); });
}
// A GROUP BY over the failed items (no index helps it): ten times rarer than the counts.
awaitable<std::optional<std::vector<failure_reason>>> control_server::impl::store_reasons() {
  return reasons.get(opts.stats_max_age * 10, opts.request_timeout,
                     [this] { return offload(admin_pool, [a = opts.admin] { return a->failure_reasons(10); }); });
}

answer control_server::impl::error(unsigned status, const std::string& why) {
  answer a;
  a.status = status;
  a.body = "{\"error\":" + json_string(why) + "}";
  return a;
}

answer control_server::impl::no_admin() {
  return error(404, "this engine's controls were given no store to administer (control_options::admin)");
}

std::string control_server::impl::store_failure(const char* doing, const std::exception& e) {
  log::warn("controls: the store could not ", doing, ": ", e.what());
  return std::string("the store could not ") + doing + " (its error is in the process's log)";
}

// GET / and the read-only views. The page carries the token its buttons need only when it is
// served to a peer that may POST (control_access::page_gets_token): to another host, it is
// read-only.
awaitable<answer> control_server::impl::page(request_in in) {
  answer a;
  a.content_type = "text/html; charset=utf-8";
  a.page = true;
  const auto counts_now = co_await store_counts();
  a.body = dashboard_html(dashboard_counts_of(eng, counts_now),
                          access.page_gets_token(in.peer_loopback) ? access.token : std::string());
  co_return a;
}

awaitable<answer> control_server::impl::history_view(request_in) {
  answer a;
  a.body = history.json();
  co_return a;
}

awaitable<answer> control_server::impl::status(request_in) {
  const auto c = co_await store_counts();
  std::optional<std::vector<failure_reason>> r;
  if (opts.admin && c && c->failed > 0) {
    r = co_await store_reasons();
  } else if (opts.admin && c) {
    r.emplace();  // nothing failed: no query
  }
  // Where the run calls an HTTP API, what its answers were.
  const auto* h = eng.figures().extras.find<http_figures>();
  answer a;
  // Percent done and the ETA, where the store's counts are known.
  const auto progress = c ? progress_members_json(progress_of(*c, history.recent_docs_per_s())) : std::string();
  // The call budgets' figures, where the run has any (max_calls, budget).
  const auto* budgets = eng.figures().extras.find<budget_figures>();
  a.body = with_members(with_members(status_json(eng, c), (h ? http_members_json(*h) : std::string()) + progress +
                                                              (budgets ? budgets->status_members() : std::string())),
                        status_extras_json(eng, r, operator_released));
  co_return a;
}

awaitable<answer> control_server::impl::metrics(request_in) {
  answer a;
  a.content_type = "text/plain; version=0.0.4; charset=utf-8";
  a.body = prometheus_text(eng, co_await store_counts());
  co_return a;
}

awaitable<answer> control_server::impl::workers(request_in) {
  std::optional<std::vector<lease_holder>> h;
  if (opts.admin) h = co_await store_holders();
  std::string store_error;
  if (opts.admin && !holders.error.empty()) {  // the store's words (SQL, maybe) go to the log only
    if (holders.error != holders_error_logged)
      log::warn("controls: the store could not list its lease holders: ", holders.error);
    store_error = "the store could not list its lease holders (its error is in the process's log)";
  }
  holders_error_logged = holders.error;
  answer a;
  a.body = workers_json(eng.worker_prefix(), eng.config().lease, eng.shards(), opts.admin != nullptr, h, store_error);
  co_return a;
}

// The run's own controls.
awaitable<answer> control_server::impl::pause_or_resume(bool pause) {
  if (pause)
    eng.pause();
  else
    eng.resume();
  answer a;
  a.body = std::string("{\"paused\":") + (eng.paused() ? "true" : "false") + "}";
  co_return a;
}
awaitable<answer> control_server::impl::pause(request_in) { return pause_or_resume(true); }
awaitable<answer> control_server::impl::resume(request_in) { return pause_or_resume(false); }

awaitable<answer> control_server::impl::concurrency(request_in in) {
  const auto n = concurrency_body(in.body);
  if (!n.value) co_return error(400, n.error);
  try {
    eng.set_concurrency(*n.value);
  } catch (const std::invalid_argument& e) {
    co_return error(400, e.what());
  }
  answer a;
  a.body = "{\"concurrency\":" + std::to_string(eng.concurrency()) + "}";
  co_return a;
}

awaitable<answer> control_server::impl::rate(request_in in) {
  const auto r = rate_body(in.body);
  if (!r.value) co_return error(400, r.error);
  if (!eng.rate_adjustable()) co_return error(409, "this engine's processor has no request rate to change");
  try {
    eng.set_rate(*r.value);
  } catch (const std::invalid_argument& e) {
    co_return error(409, e.what());
  }
  const auto now = eng.rate_per_second();
  answer a;
  a.body = "{\"rate_per_second\":" + (now ? json_number(*now) : std::string("null")) + "}";
  co_return a;
}

// The store's items, through the admin store: a blocking call on the admin thread. Its
// invalid_argument (a filter the store can't apply) is the caller's 400; any other failure is
// the store's 503 (store_failure: its words go to the log). The cached views it changes are
// dropped, and the engine woken: the items it freed are claimable now.
template <class Call>
awaitable<std::optional<std::uint64_t>> control_server::impl::admin_change(Call call, const char* doing, answer& failed) {
  if (!opts.admin) {
    failed = no_admin();
    co_return std::nullopt;
  }
  std::uint64_t n = 0;
  try {
    n = co_await offload(admin_pool, std::move(call));
  } catch (const std::invalid_argument& e) {
    failed = error(400, e.what());
    co_return std::nullopt;
  } catch (const std::exception& e) {
    failed = error(503, store_failure(doing, e));
    co_return std::nullopt;
  }
  counts.invalidate();
  eng.wake();
  co_return n;
}

// An operator frees a (dead) worker's leases at once instead of waiting out the lease. Fenced
// in the store: a live worker's later write is discarded as a lost lease, never doubled.
awaitable<answer> control_server::impl::release(request_in in) {
  const auto name = release_body(in.body);
  if (!name.value) co_return error(400, name.error);
  answer a;
  // Named, then moved: g++ 12 mishandles class temporaries built inside a co_await expression.
  auto call = [ad = opts.admin, w = *name.value] { return ad->release_worker(w); };
  const auto n = co_await admin_change(std::move(call), "release the leases", a);
  if (!n) co_return a;
  operator_released += *n;
  holders.invalidate();
  log::warn("released ", *n, " lease(s) of worker ", *name.value, " at an operator's request (POST /release)");
  a.body = "{\"released\":" + std::to_string(*n) + ",\"worker\":" + json_string(*name.value) + "}";
  co_return a;
}

awaitable<answer> control_server::impl::retry(request_in in) {
  const auto parsed = retry_body(in.body);
  if (!parsed.value) co_return error(400, parsed.error);
  const retry_filter which = *parsed.value;
  answer a;
  auto call = [ad = opts.admin, which] { return ad->retry_failed(which); };  // named: see release()
  const auto n = co_await admin_change(std::move(call), "put the failures back", a);
  if (!n) co_return a;
  reasons.invalidate();
  log::warn("put ", *n, " failed item(s) back to pending at an operator's request (POST /retry)");
  a.body = "{\"retried\":" + std::to_string(*n) + "}";
  co_return a;
}

std::string control_server::impl::endpoint_list() {
  std::string out = "not found:";
  for (const auto method : {bhttp::verb::get, bhttp::verb::post}) {
    out += method == bhttp::verb::get ? " GET" : "; POST";
    bool first = true;
    for (const auto& r : routes)
      if (r.method == method) {
        out += (first ? " " : ", ") + std::string(r.path);
        first = false;
      }
  }
  return out;
}

awaitable<answer> control_server::impl::route(bhttp::verb method, std::string_view target, request_in in) {
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  bool known = false;
  for (const auto& r : routes) {
    if (r.path != target) continue;
    if (r.method == method) co_return co_await (this->*r.run)(in);
    known = true;
  }
  co_return known ? error(405, "method not allowed") : error(404, endpoint_list());
}

control_server::control_server(net::io_context& ioc, engine& e, control_options options)
    : impl_(std::make_shared<impl>(ioc, e, std::move(options))) {}

control_server::control_server(net::io_context& ioc, engine& e, std::string address, std::uint16_t port)
    : control_server(ioc, e, [&] {
        control_options o;
        o.address = std::move(address);
        o.port = port;
        return o;
      }()) {}

control_server::~control_server() = default;

void control_server::start() {
  auto& i = *impl_;
  const auto& address = i.opts.address;
  boost::system::error_code ec;
  const auto addr = net::ip::make_address(address, ec);
  if (ec) throw std::invalid_argument("metrics address '" + address + "': " + ec.message());
  const tcp::endpoint ep(addr, i.opts.port);
  open_close_on_exec(i.acceptor, ep.protocol(), ec);
  if (ec) throw std::runtime_error("cannot open a socket for " + address + ": " + ec.message());
  i.acceptor.set_option(tcp::acceptor::reuse_address(true));
  i.acceptor.bind(ep, ec);
  if (ec == boost::system::errc::address_in_use)
    throw std::runtime_error("port " + std::to_string(i.opts.port) + " on " + address + " is in use");
  if (ec) throw std::runtime_error("cannot listen on " + address + ":" + std::to_string(i.opts.port) + ": " + ec.message());
  i.acceptor.listen();
  i.opts.port = i.acceptor.local_endpoint().port();
  i.access.port = i.opts.port;
  i.access.listen_address = addr.to_string();
  i.access.extra_hosts = i.opts.allowed_hosts;
  i.access.posts_from_loopback_only = i.opts.posts_from_loopback_only;
  net::co_spawn(i.ioc, i.accept_loop(), net::detached);
  net::co_spawn(i.ioc, i.sample_loop(), net::detached);
}

void control_server::stop() {
  boost::system::error_code ignored;
  impl_->stopped = true;
  impl_->sampler.cancel();
  impl_->acceptor.close(ignored);
  for (auto& s : impl_->sessions) s.stream.socket().close(ignored);
}

std::uint16_t control_server::port() const { return impl_->opts.port; }

const std::string& control_server::token() const { return impl_->access.token; }

}  // namespace dibs::http
