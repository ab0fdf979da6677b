#include "control_server.hpp"

#include "cached_fetch.hpp"
#include "control_access.hpp"
#include "dashboard_page.hpp"
#include "http_figures.hpp"
#include "run_history.hpp"
#include "control_json.hpp"

#include <dibs/async_event.hpp>
#include <dibs/close_on_exec.hpp>
#include <dibs/json_text.hpp>
#include <dibs/log.hpp>
#include <dibs/offload.hpp>
#include <dibs/metrics_text.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <list>
#include <stdexcept>

namespace dibs::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

struct control_server::impl : std::enable_shared_from_this<impl> {
  impl(net::io_context& i, engine& e, control_options o) : ioc(i), eng(e), opts(std::move(o)), acceptor(i), sampler(i) {
    access.token = make_control_token();
  }

  struct answer {
    unsigned status = 200;
    std::string content_type = "application/json";
    std::string body;
    bool page = false;  // the dashboard: sent with headers that keep it out of other sites' frames
  };

  // The run's cumulative figures now, for the history's next sample.
  run_reading reading() const {
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
  awaitable<void> sample_loop() {
    auto self = shared_from_this();
    while (!stopped) {  // stop() may come before this coroutine first runs
      history.add(reading());
      sampler.expires_after(std::chrono::seconds(1));
      auto [ec] = co_await sampler.async_wait(net::as_tuple(net::use_awaitable));
      if (ec) co_return;
    }
  }

  using clock = std::chrono::steady_clock;

  // The store's counts (a full count on some stores), its lease holders and its failure reasons:
  // each fetched at most once per stats_max_age (cached_fetch.hpp). The admin calls block, so
  // they run on a thread of their own, never on this io_context's.
  awaitable<std::optional<store_stats>> store_counts() {
    return counts.get(opts.stats_max_age, opts.request_timeout, [this] { return eng.the_store().stats(); });
  }
  awaitable<std::optional<std::vector<lease_holder>>> store_holders() {
    return holders.get(opts.stats_max_age, opts.request_timeout,
                       [this] { return offload(admin_pool, [a = opts.admin] { return a->lease_holders(); }); });
  }
  // A GROUP BY over the failed items (no index helps it): ten times rarer than the counts.
  awaitable<std::optional<std::vector<failure_reason>>> store_reasons() {
    return reasons.get(opts.stats_max_age * 10, opts.request_timeout,
                       [this] { return offload(admin_pool, [a = opts.admin] { return a->failure_reasons(10); }); });
  }

  static answer error(unsigned status, const std::string& why) {
    answer a;
    a.status = status;
    a.body = "{\"error\":" + json_string(why) + "}";
    return a;
  }
  static answer no_admin() {
    return error(404, "this engine's controls were given no store to administer (control_options::admin)");
  }

  // GET / and the read-only views.
  awaitable<answer> page(const std::string&) {
    answer a;
    a.content_type = "text/html; charset=utf-8";
    a.page = true;
    a.body = dashboard_html(dashboard_counts_of(eng, co_await store_counts()), access.token);
    co_return a;
  }
  awaitable<answer> history_view(const std::string&) {
    answer a;
    a.body = history.json();
    co_return a;
  }
  awaitable<answer> status(const std::string&) {
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
    a.body = with_members(with_members(status_json(eng, c), h ? http_members_json(*h) : std::string()),
                          status_extras_json(eng, r, operator_released));
    co_return a;
  }
  awaitable<answer> metrics(const std::string&) {
    answer a;
    a.content_type = "text/plain; version=0.0.4; charset=utf-8";
    a.body = prometheus_text(eng, co_await store_counts());
    co_return a;
  }
  awaitable<answer> workers(const std::string&) {
    std::optional<std::vector<lease_holder>> h;
    if (opts.admin) h = co_await store_holders();
    answer a;
    a.body = workers_json(eng.worker_prefix(), eng.config().lease, eng.shards(), opts.admin != nullptr, h,
                          opts.admin ? holders.error : std::string());
    co_return a;
  }

  // The run's own controls.
  awaitable<answer> pause_or_resume(bool pause) {
    if (pause)
      eng.pause();
    else
      eng.resume();
    answer a;
    a.body = std::string("{\"paused\":") + (eng.paused() ? "true" : "false") + "}";
    co_return a;
  }
  awaitable<answer> pause(const std::string&) { return pause_or_resume(true); }
  awaitable<answer> resume(const std::string&) { return pause_or_resume(false); }
  awaitable<answer> concurrency(const std::string& body) {
    const auto n = concurrency_body(body);
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
  awaitable<answer> rate(const std::string& body) {
    const auto r = rate_body(body);
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
  // the store's 503, prefixed with `what`. The cached views it changes are dropped, and the
  // engine woken: the items it freed are claimable now.
  template <class Call>
  awaitable<std::optional<std::uint64_t>> admin_change(Call call, const char* what, answer& failed) {
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
      failed = error(503, std::string(what) + e.what());
      co_return std::nullopt;
    }
    counts.invalidate();
    eng.wake();
    co_return n;
  }

  // An operator frees a (dead) worker's leases at once instead of waiting out the lease. Fenced
  // in the store: a live worker's later write is discarded as a lost lease, never doubled.
  awaitable<answer> release(const std::string& body) {
    const auto name = release_body(body);
    if (!name.value) co_return error(400, name.error);
    answer a;
    // Named, then moved: g++ 12 mishandles class temporaries built inside a co_await expression.
    auto call = [ad = opts.admin, w = *name.value] { return ad->release_worker(w); };
    const auto n = co_await admin_change(std::move(call), "the store could not release the leases: ", a);
    if (!n) co_return a;
    operator_released += *n;
    holders.invalidate();
    log::warn("released ", *n, " lease(s) of worker ", *name.value, " at an operator's request (POST /release)");
    a.body = "{\"released\":" + std::to_string(*n) + ",\"worker\":" + json_string(*name.value) + "}";
    co_return a;
  }

  awaitable<answer> retry(const std::string& body) {
    const auto parsed = retry_body(body);
    if (!parsed.value) co_return error(400, parsed.error);
    const retry_filter which = *parsed.value;
    answer a;
    auto call = [ad = opts.admin, which] { return ad->retry_failed(which); };  // named: see release()
    const auto n = co_await admin_change(std::move(call), "the store could not put the failures back: ", a);
    if (!n) co_return a;
    reasons.invalidate();
    log::warn("put ", *n, " failed item(s) back to pending at an operator's request (POST /retry)");
    a.body = "{\"retried\":" + std::to_string(*n) + "}";
    co_return a;
  }

  using handler = awaitable<answer> (impl::*)(const std::string& body);
  struct route_entry {
    std::string_view path;
    bhttp::verb method;
    handler run;
  };
  // Every endpoint, once: the 405 and the 404's list come from here too.
  static constexpr route_entry routes[] = {
      {"/", bhttp::verb::get, &impl::page},                {"/history", bhttp::verb::get, &impl::history_view},
      {"/status", bhttp::verb::get, &impl::status},        {"/metrics", bhttp::verb::get, &impl::metrics},
      {"/workers", bhttp::verb::get, &impl::workers},      {"/pause", bhttp::verb::post, &impl::pause},
      {"/resume", bhttp::verb::post, &impl::resume},       {"/release", bhttp::verb::post, &impl::release},
      {"/concurrency", bhttp::verb::post, &impl::concurrency}, {"/rate", bhttp::verb::post, &impl::rate},
      {"/retry", bhttp::verb::post, &impl::retry},
  };

  static std::string endpoint_list() {
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

  awaitable<answer> route(bhttp::verb method, std::string_view target, const std::string& body) {
    if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
    bool known = false;
    for (const auto& r : routes) {
      if (r.path != target) continue;
      if (r.method == method) co_return co_await (this->*r.run)(body);
      known = true;
    }
    co_return known ? error(405, "method not allowed") : error(404, endpoint_list());
  }

  static std::optional<std::string_view> header(const bhttp::request<bhttp::string_body>& req, std::string_view name) {
    const auto it = req.find(name);
    if (it == req.end()) return std::nullopt;
    return std::string_view(it->value().data(), it->value().size());
  }

  awaitable<void> session(std::list<beast::tcp_stream>::iterator it) {
    auto self = shared_from_this();  // the server may be stopped while a session runs
    auto& stream = *it;
    beast::flat_buffer buffer;
    for (bool first = true;; first = false) {
      if (buffer.size() == 0) {  // wait for the next request's first bytes
        stream.expires_after(first ? opts.request_timeout : opts.idle_timeout);
        auto [ec, n] = co_await stream.async_read_some(buffer.prepare(2048), net::as_tuple(net::use_awaitable));
        if (ec) break;
        buffer.commit(n);
      }
      stream.expires_after(opts.request_timeout);  // then the whole request, however slowly it trickles
      bhttp::request_parser<bhttp::string_body> parser;
      parser.header_limit(8 * 1024);
      parser.body_limit(4 * 1024);  // the controls take no body worth the name
      auto [ec, n] = co_await bhttp::async_read(stream, buffer, parser, net::as_tuple(net::use_awaitable));
      if (ec) break;
      auto req = parser.release();
      answer a;
      boost::system::error_code peer_ec;
      const auto peer = stream.socket().remote_endpoint(peer_ec);
      const bool peer_loopback = !peer_ec && (peer.address().is_loopback() ||
                                              (peer.address().is_v6() && peer.address().to_v6().is_v4_mapped() &&
                                               net::ip::make_address_v4(net::ip::v4_mapped, peer.address().to_v6()).is_loopback()));
      const auto no = check_control_request(access, req.method() == bhttp::verb::post,
                                            header(req, "Host").value_or(""), header(req, "Origin"),
                                            header(req, control_header), peer_loopback, header(req, token_header));
      if (no) {
        a.status = no->status;
        a.body = "{\"error\":\"" + no->reason + "\"}";
      } else {
        a = co_await route(req.method(), req.target(), req.body());
      }
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(a.status), req.version()};
      res.set(bhttp::field::server, "dibs");
      res.set(bhttp::field::content_type, a.content_type);
      res.set(bhttp::field::cache_control, "no-store");
      res.set("X-Content-Type-Options", "nosniff");
      if (a.page) {  // its own inline style and script, its own endpoints, and no frame of another site
        res.set("Content-Security-Policy",
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
                "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
        res.set("X-Frame-Options", "DENY");
        res.set("Referrer-Policy", "no-referrer");
      }
      res.keep_alive(req.keep_alive() && !no);
      res.body() = std::move(a.body);
      res.prepare_payload();
      auto [wec, w] = co_await bhttp::async_write(stream, res, net::as_tuple(net::use_awaitable));
      if (wec || !res.keep_alive()) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    sessions.erase(it);
  }

  awaitable<void> accept_loop() {
    auto self = shared_from_this();
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
      if (ec) {
        if (!acceptor.is_open()) co_return;
        continue;
      }
      close_on_exec(socket.native_handle());  // like every socket dibs opens
      if (sessions.size() >= opts.max_connections) {  // closed at once: no slot, no answer
        boost::system::error_code ignored;
        socket.close(ignored);
        continue;
      }
      sessions.emplace_front(std::move(socket));
      net::co_spawn(ioc, session(sessions.begin()), net::detached);
    }
  }

  net::io_context& ioc;
  engine& eng;
  control_options opts;
  control_access access;
  tcp::acceptor acceptor;
  net::steady_timer sampler;
  run_history history;
  bool stopped = false;
  std::list<beast::tcp_stream> sessions;
  cached_value<store_stats> counts;
  cached_value<std::vector<lease_holder>> holders;
  cached_value<std::vector<failure_reason>> reasons;
  std::uint64_t operator_released = 0;  // leases freed by POST /release, since start
  offload_pool admin_pool{1};           // the admin store's blocking calls
};

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
  for (auto& s : impl_->sessions) s.socket().close(ignored);
}

std::uint16_t control_server::port() const { return impl_->opts.port; }

const std::string& control_server::token() const { return impl_->access.token; }

}  // namespace dibs::http
