#include "exchange_io.hpp"

#include "tcp_signals.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include <functional>
#include <memory>
#include <tuple>

namespace dibs::http {

namespace bhttp = boost::beast::http;
using steady = std::chrono::steady_clock;

namespace {
// Beast reads what the buffer has room for, and at least 512 bytes: the parser takes the body out
// of the buffer as it comes, so the buffer never grows and a body is read 512 bytes a read (a
// hundred embeddings, 3 MB, took 6,000 reads). A body larger than that is read into room made
// once for the connection (within its bound, read_buffer_max).
void read_body_in_large_reads(connection& c, const response_reader& parser) {
  constexpr std::size_t large_read = 16 * 1024;
  static_assert(large_read <= read_buffer_max);
  const auto length = parser.content_length();
  if (c.buffer.capacity() < large_read && (!length || *length > c.buffer.capacity())) c.buffer.reserve(large_read);
}


constexpr int max_interim = 8;  // more 1xx answers than this before the final one: a broken server

}  // namespace

// The check of a new connection's request (see exchange_io.hpp). Shared with the timer's handler,
// which may run after the exchange has ended: `armed` tells it whether the stream is still there.
struct first_byte_check {
  explicit first_byte_check(const net::any_io_executor& ex) : timer(ex) {}
  net::steady_timer timer;
  boost::beast::tcp_stream* stream = nullptr;
  bool armed = false;
  bool fired = false;  // found the request unacknowledged and cancelled the read
  steady::time_point give_up;  // unacknowledged then: the server never took the connection
  std::chrono::milliseconds poll{0};
  std::function<void()> acknowledged;  // called once the request is known acknowledged
  // Whether the bytes count as acknowledged: any byte past the SYN taken (the server's kernel
  // took the connection: what it acknowledged reaches the server), or where the kernel can't
  // count them, the request's all taken. (Given up with some of it acknowledged, the request
  // failed as a timeout, and the engine tried the item again: the same call twice at the server.)
  bool (*taken)(int fd) = [](int fd) {
    const auto acked = bytes_acknowledged(fd);
    return acked ? *acked > 1 : !request_unacknowledged(fd);
  };
  bool gives_up = true;  // at give_up, unacknowledged: the exchange is abandoned (else the look just ends)
};

namespace {

// The first look for the acknowledgement comes this soon after the write (loopback acknowledges
// in microseconds), and each next one twice as late, up to the give-up time.
constexpr std::chrono::milliseconds first_poll{1};

void look(const std::shared_ptr<first_byte_check>& check) {
  const auto now = steady::now();
  const auto at = check->acknowledged ? std::min(check->give_up, now + check->poll) : check->give_up;
  check->poll *= 2;
  check->timer.expires_at(at);
  check->timer.async_wait([check](const boost::system::error_code& ec) {
    if (ec || !check->armed) return;
    if (check->taken(check->stream->socket().native_handle())) {
      // Taken by the server's kernel: a slow answer, if any, is no dropped handshake.
      if (auto proven = std::move(check->acknowledged)) {
        check->acknowledged = nullptr;
        proven();
      }
      return;
    }
    if (steady::now() < check->give_up) return look(check);
    if (!check->gives_up) return;
    check->fired = true;
    check->stream->socket().cancel();
  });
}

std::shared_ptr<first_byte_check> arm(connection& c, std::chrono::milliseconds after, std::function<void()> acknowledged) {
  auto check = std::make_shared<first_byte_check>(c.tcp().get_executor());
  check->stream = &c.tcp();
  check->armed = true;
  check->give_up = steady::now() + after;
  check->poll = first_poll;
  check->acknowledged = std::move(acknowledged);
  look(check);
  return check;
}

// The check gave up on the request, unacknowledged, and cancelled the read; by the time the read
// is back (the event loop comes to it later, busy with hundreds of calls), the server's kernel
// acknowledged it: the server took the connection and has the request, whose answer is still to
// read. Given up, the exchange failed as a timeout and the engine tried the item again: against
// a server whose backlog overflowed (gunicorn's sync workers, 256 calls at once) four items were
// asked twice in a run.
bool resumed_after_give_up(const std::shared_ptr<first_byte_check>& check, const boost::system::error_code& ec, int fd) {
  if (!check || !check->fired || ec != net::error::operation_aborted || !check->taken(fd)) return false;
  check->fired = false;
  if (auto proven = std::move(check->acknowledged)) {  // the connection exists, as any acknowledged one
    check->acknowledged = nullptr;
    proven();
  }
  return true;
}

void disarm(const std::shared_ptr<first_byte_check>& check) {
  if (!check) return;
  check->armed = false;
  check->timer.cancel();
}

// Disarms the check however the exchange ends: a cancelled coroutine (shutdown, max_processing)
// leaves by an exception or is destroyed where it waits, and its connection may go with it; the
// timer's handler must not reach for that stream then.
struct disarm_at_exit {
  const std::shared_ptr<first_byte_check>& check;
  ~disarm_at_exit() { disarm(check); }
};

response_reader& new_reader(connection& c, response& res, std::size_t max_body) {
  auto& parser = c.reader.emplace(res);
  parser.body_limit(max_body);
  parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  return parser;
}

}  // namespace

acknowledgement_watch::acknowledgement_watch(connection& c, steady::time_point until, std::function<void()> acknowledged) {
  if (!acknowledged) return;
  check_ = std::make_shared<first_byte_check>(c.tcp().get_executor());
  check_->stream = &c.tcp();
  check_->armed = true;
  check_->give_up = until;
  check_->poll = first_poll;
  check_->acknowledged = std::move(acknowledged);
  check_->taken = [](int fd) {
    const auto acked = bytes_acknowledged(fd);
    return acked && *acked > 1;  // past the SYN's one: the first flight reached an accepted connection
  };  // (and never the request's rule where the kernel can't count: nothing of it is sent yet)
  check_->gives_up = false;
  look(check_);
}

acknowledgement_watch::~acknowledgement_watch() { disarm(check_); }

awaitable<exchange_result> exchange(connection& c, const std::string& wire, response& res, std::size_t max_body,
                                    std::chrono::milliseconds check_after, std::function<void()> acknowledged) {
  // Plain and TLS streams are different types: each branch awaits its own (no co_await in a
  // conditional expression, for g++ 12). One error code and size for every await.
  exchange_result x;
  std::size_t n = 0;
  c.reader.reset();
  const int fd = c.tcp().socket().native_handle();
  // Only a kept-alive connection's request is ever sent again (client.cpp: stale_retry): only
  // there is the count read before it goes, not once per request on every connection.
  const auto acked_before = res.reused ? bytes_acknowledged(fd) : std::nullopt;
  const auto unreceived = [&] {
    if (!acked_before || *acked_before < 1) return false;  // 0: a kernel that does not keep it
    const auto acked_after = bytes_acknowledged(fd);
    return acked_after && *acked_after == *acked_before;
  };
  // The latency counts from when the write begins: a request of a few hundred bytes leaves at
  // once (the socket takes it in the initiating call), but this coroutine resumes after the write
  // only when the event loop comes to it, a millisecond and more later with dozens of calls in
  // flight, and more over TLS: counted from there, answers of a server that sleeps 2 ms read
  // 0.46-0.58 ms (0.04 ms over TLS), and the limit steered by a latency that was not the server's.
  const auto written = steady::now();
  if (c.tls)
    std::tie(x.ec, n) = co_await net::async_write(*c.tls, net::buffer(wire), net::as_tuple(net::use_awaitable));
  else
    std::tie(x.ec, n) = co_await net::async_write(*c.plain, net::buffer(wire), net::as_tuple(net::use_awaitable));
  if (x.ec) {
    x.unreceived = unreceived();
    co_return x;
  }
  x.written = true;
  auto check = check_after.count() > 0 ? arm(c, check_after, std::move(acknowledged)) : nullptr;
  const disarm_at_exit guard{check};

  auto* parser = &new_reader(c, res, max_body);
  for (;;) {
    if (resumed_after_give_up(check, x.ec, fd)) x.ec = {};
    if (x.ec) break;
    quick_ack(fd);
    if (c.tls)
      std::tie(x.ec, n) = co_await bhttp::async_read_some(*c.tls, c.buffer, *parser, net::as_tuple(net::use_awaitable));
    else
      std::tie(x.ec, n) = co_await bhttp::async_read_some(*c.plain, c.buffer, *parser, net::as_tuple(net::use_awaitable));
    if (x.ec) continue;  // (unless the check gave up too soon: resumed_after_give_up)
    if (x.first_byte.count() == 0 && parser->is_header_done()) {
      x.first_byte = std::max(std::chrono::microseconds(1),
                              std::chrono::duration_cast<std::chrono::microseconds>(steady::now() - written));
      disarm(check);
      read_body_in_large_reads(c, *parser);
    }
    if (!parser->is_done()) continue;
    const int status = res.status;
    if (status < 100 || status >= 200 || status == 101) break;  // the final answer
    // An interim answer: the final one follows on the same connection.
    if (++x.interim > max_interim) {
      x.ec = bhttp::error::bad_status;
      break;
    }
    parser = &new_reader(c, res, max_body);
  }
  disarm(check);
  // The check found the request unacknowledged and gave up on the connection (an answer that won
  // the race is an answer). Sent again elsewhere only if provably never received; else it is an
  // attempt that timed out. Either way the connection is reset, not closed: the kernel would
  // deliver the request later, if the server accepts it then.
  const bool gave_up = check && check->fired && x.ec;
  x.dropped = gave_up && nothing_acknowledged(fd);
  if (gave_up) {
    if (!x.dropped) x.ec = net::error::timed_out;
    reset_on_close(fd);
  }
  if (x.ec) {
    x.unreceived = unreceived();
    // No complete answer: nothing of a partial one is reported.
    x.nothing_received = !parser->got_some() && x.first_byte.count() == 0;
    res.status = 0;
    res.headers.clear();
    res.body.clear();
  } else {
    x.nothing_received = false;
  }
  co_return x;
}

}  // namespace dibs::http
