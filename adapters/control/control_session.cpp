// How the controls (control_server.hpp) take connections and read requests: a slot for each
// connection (control_slots.hpp: when they are all taken, the longest-waiting one gives way),
// requests read within the bounds of control_framing.hpp, and every header checked (framing,
// then who may do what: control_access.hpp) before any body is read. A refused or unreadable
// request is answered and ends its connection.
#include "control_framing.hpp"
#include "control_server_impl.hpp"

#include "engine/src/close_on_exec.hpp"
#include "engine/src/json_text.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace dibs::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using answer = control_server::impl::answer;

namespace {

// 127.0.0.0/8, ::1, and ::ffff:127.x.y.z (a dual-stack socket's view of an IPv4 loopback peer).
bool is_loopback(const net::ip::address& a) {
  if (a.is_loopback()) return true;
  return a.is_v6() && a.to_v6().is_v4_mapped() && net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).is_loopback();
}

std::optional<std::string_view> header(const bhttp::fields& head, std::string_view name) {
  const auto it = head.find(name);
  if (it == head.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

std::optional<refusal> access_refusal(const control_access& access, const bhttp::request_header<>& head,
                                      bool peer_loopback) {
  control_request r;
  r.is_post = head.method() == bhttp::verb::post;
  r.host = header(head, "Host").value_or("");
  r.origin = header(head, "Origin");
  r.token = header(head, token_header);
  r.authorization = header(head, key_header);
  r.peer_is_loopback = peer_loopback;
  return check_control_request(access, r);
}

bhttp::response<bhttp::string_body> response_of(answer a, unsigned version) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(a.status), version};
  res.set(bhttp::field::server, "dibs");
  res.set(bhttp::field::content_type, a.content_type);
  res.set(bhttp::field::cache_control, "no-store");
  res.set("X-Content-Type-Options", "nosniff");
  if (a.status == 401) res.set(bhttp::field::www_authenticate, "Bearer realm=\"dibs controls\"");
  if (a.page) {  // its own inline style and script, its own endpoints, and no frame of another site
    res.set("Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
            "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.set("X-Frame-Options", "DENY");
    res.set("Referrer-Policy", "no-referrer");
  }
  res.body() = std::move(a.body);
  return res;
}

// After a refusal, with the peer's request (or the rest of it) perhaps still on its way: our
// side is shut so the answer is sent, and what the peer sends meanwhile read and dropped, a
// bounded amount for a bounded time. Closing at once with unread bytes would reset the
// connection, and the peer could lose the answer that says why.
awaitable<void> linger(beast::tcp_stream& stream) {
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.expires_after(std::chrono::seconds(1));
  char sink[4096];
  for (std::size_t dropped = 0; dropped < 64 * 1024;) {
    auto [ec, n] = co_await stream.async_read_some(net::buffer(sink), net::as_tuple(net::use_awaitable));
    if (ec) break;
    dropped += n;
  }
}

}  // namespace

awaitable<void> control_server::impl::session(session_list::iterator it, bool peer_loopback) {
  auto self = shared_from_this();  // the server may be stopped while a session runs
  auto& stream = it->stream;
  const auto slot = it->slot;
  using state = control_slots::state;
  beast::flat_buffer buffer(control_limits::buffer_bytes);
  for (bool first = true;; first = false) {
    if (buffer.size() == 0) {  // wait for the next request's first bytes
      slots.set(slot, state::idle, std::chrono::steady_clock::now());
      stream.expires_after(first ? opts.request_timeout : opts.idle_timeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(2048), net::as_tuple(net::use_awaitable));
      if (ec) break;
      buffer.commit(n);
    }
    slots.set(slot, state::reading, std::chrono::steady_clock::now());
    stream.expires_after(opts.request_timeout);  // then the whole request, however slowly it trickles
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(control_limits::header_bytes);
    parser.body_limit(control_limits::body_bytes);
    auto [hec, hn] = co_await bhttp::async_read_header(stream, buffer, parser, net::as_tuple(net::use_awaitable));
    std::optional<refusal> no;
    if (hec) {
      no = read_failure_answer(hec, false);
      if (!no) break;
    } else {
      no = check_framing(parser.get());
      if (!no) no = access_refusal(access, parser.get(), peer_loopback);
    }
    if (!no && !parser.is_done()) {  // the body, now that the request may go ahead
      auto [bec, bn] = co_await bhttp::async_read(stream, buffer, parser, net::as_tuple(net::use_awaitable));
      if (bec) {
        no = read_failure_answer(bec, true);
        if (!no) break;
      }
    }
    slots.set(slot, state::answering, std::chrono::steady_clock::now());
    const unsigned version = hec ? 11 : parser.get().version();
    answer a;
    if (no) {
      a = error(no->status, no->reason);
    } else {  // (no co_await in a conditional expression, no temporary built in one: g++ 12)
      const auto& req = parser.get();
      const request_in in{req.body(), peer_loopback};
      a = co_await route(req.method(), req.target(), in);
    }
    auto res = response_of(std::move(a), version);
    res.keep_alive(!no && parser.get().keep_alive());
    res.prepare_payload();
    auto [wec, w] = co_await bhttp::async_write(stream, res, net::as_tuple(net::use_awaitable));
    if (wec) break;
    if (no) {
      co_await linger(stream);
      break;
    }
    if (!res.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  slots.remove(slot);
  sessions.erase(it);
}

void control_server::impl::drop(control_slots::id which) {
  for (auto& s : sessions)
    if (s.slot == which) {
      boost::system::error_code ignored;
      s.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      s.stream.socket().close(ignored);  // its read ends at once; its coroutine frees the slot
    }
  slots.remove(which);  // taken now, so that the new connection has it
}

awaitable<void> control_server::impl::accept_loop() {
  auto self = shared_from_this();
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(net::as_tuple(net::use_awaitable));
    if (ec) {
      if (!acceptor.is_open()) co_return;
      continue;
    }
    close_on_exec(socket.native_handle());  // like every socket dibs opens
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) continue;  // gone already
    const auto peer_address = peer.address().to_string();
    const auto verdict = slots.admit(peer_address);
    if (!verdict.admit) {  // every slot is answering a request: closed at once, unanswered
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    if (verdict.evict) drop(*verdict.evict);
    const auto slot = slots.add(peer_address, std::chrono::steady_clock::now());
    sessions.push_front(session_slot{beast::tcp_stream(std::move(socket)), slot});
    net::co_spawn(ioc, session(sessions.begin(), is_loopback(peer.address())), net::detached);
  }
}

}  // namespace dibs::http
