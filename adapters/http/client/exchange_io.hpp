// One request and its answer on one connection of the HTTP client (client.hpp): the bytes
// written, then the answer read with Beast's parser into a `response`, with what the client
// learns on the way:
//   - the time from the request's write begun to the answer's header (the adaptive limit's latency);
//   - interim answers (100 Continue, 103 Early Hints) read past, up to the final one: taking one
//     for the answer would leave the real one unread for the next request on the connection;
//   - every read preceded by TCP_QUICKACK (tcp_signals.hpp): no 40 ms delayed-ACK stall against
//     servers that write headers and body separately;
//   - on a new connection, after `check_after` without an answer, whether the server's kernel
//     acknowledged the request at all; if not, the server never accepted the connection (its
//     backlog was full) and the exchange is abandoned (`dropped`) instead of waiting out the
//     request's deadline. Before that, it looks soon and ever less often (1 ms, 2, 4...) whether
//     the request was acknowledged, and says so (`acknowledged`): the connection exists, the
//     server's backlog took it, whatever the answer's latency.
// Internal to the client.
#pragma once

#include <dibs/http/client.hpp>
#include "connection.hpp"

#include <dibs/net.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace dibs::http {

struct exchange_result {
  boost::system::error_code ec;  // set when no complete answer came
  bool written = false;          // the request went out whole (else `ec` is the write's)
  bool nothing_received = true;  // no byte of an answer arrived
  bool dropped = false;          // abandoned: the server never accepted the connection, nor received a byte
  // No byte of this request was acknowledged by the server's kernel (it failed without an answer,
  // and the connection's acknowledged bytes did not move since before it was written): it never
  // reached the server, and may go again. Read on kept-alive connections only (res.reused); false
  // on new ones, when it may have reached the server, or when the kernel can't tell.
  bool unreceived = false;
  std::chrono::microseconds first_byte{0};  // the request's write begun -> the answer's header
  int interim = 0;                          // 1xx answers read past
};

struct first_byte_check;

// While a new TLS connection's handshake is under way: looks soon and ever less often (1 ms, 2,
// 4... until `until`) whether the server's kernel acknowledged any byte of the client's first
// flight, and if so calls `acknowledged` once (on the connection's executor, while the watch
// lives). The connection then sits in the server's accept queue or beyond it (a full queue drops
// the handshake's last ACK, and the kernel discards what the client sends until it takes the
// connection): it is proven (connect_window.hpp) one round trip of the kernel after its connect,
// not after the handshake and the first request: against a server whose handshake takes 50 ms,
// a window of 4 let four connections open per handshake, and the 16 a ramp's step asked for took
// four handshakes. Never abandons the connection: a handshake has its own deadline.
class acknowledgement_watch {
 public:
  acknowledgement_watch(connection& c, std::chrono::steady_clock::time_point until, std::function<void()> acknowledged);
  ~acknowledgement_watch();
  acknowledgement_watch(const acknowledgement_watch&) = delete;
  acknowledgement_watch& operator=(const acknowledgement_watch&) = delete;

 private:
  std::shared_ptr<first_byte_check> check_;
};

// The answer goes into `res` (status, headers, body; cleared when none came whole). `check_after`
// 0: no check (a kept-alive connection was accepted long ago). `acknowledged` (may be empty) is
// called at most once, on the connection's executor, while the exchange is under way.
awaitable<exchange_result> exchange(connection& c, const std::string& wire, response& res, std::size_t max_body,
                                    std::chrono::milliseconds check_after, std::function<void()> acknowledged = {});

}  // namespace dibs::http
