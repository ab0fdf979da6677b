// What a client's TCP socket says beyond its bytes (Linux), for the HTTP client:
//   - quick_ack: acknowledge what arrives at once. A server that writes its headers and body in
//     two writes without TCP_NODELAY holds the body until the headers are acknowledged; a delayed
//     ACK makes that 40 ms per request. The kernel leaves quick-ack mode by itself, so it is set
//     again before every read.
//   - request_unacknowledged: bytes written that the peer's kernel has not acknowledged. A server
//     whose accept queue was full dropped the handshake's last ACK: the client thinks it is
//     connected, but the server's kernel discards the request until the connection is accepted,
//     possibly seconds later. Any live server's kernel acknowledges a request at once, however
//     slow the server itself is, so this tells a dropped handshake from a slow answer.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace dibs::http {

void quick_ack(int fd);
bool request_unacknowledged(int fd);
// Whether the peer's kernel acknowledged no byte since the handshake (TCP_INFO's bytes_acked is
// the SYN's 1 alone): a request written on a new plain connection then provably never reached the
// server, and may go again on another connection. false when the kernel can't tell, or when any
// byte was acknowledged (a TLS handshake's included): then it may have reached the server, and is
// an attempt that timed out, never sent twice.
bool nothing_acknowledged(int fd);
// The bytes the peer's kernel acknowledged on this connection so far (the SYN's one included);
// nullopt when the kernel can't tell. Read before a request is written and after it failed, the
// same figure proves that no byte of that request reached the server (a kept-alive connection the
// server had closed answers it with a reset, never an acknowledgement).
std::optional<std::uint64_t> bytes_acknowledged(int fd);
// Whether the peer has closed its side (an end of stream waits to be read): a kept-alive
// connection the server closed while it was idle, not to be used again. Never blocks.
bool peer_closed(int fd);
// The connection, once closed, is reset (SO_LINGER 0): what this kernel has not delivered is
// dropped, never delivered later. A request abandoned on a connection the server had not
// accepted would otherwise still reach it when the server accepts the connection seconds later
// (the kernel retransmits it after the close): the same request twice at the server.
void reset_on_close(int fd);

// How long a new connection's request may go without any answer before the client checks
// whether the server ever took the connection: twice the origin's recent time to first byte,
// within [25 ms, 1 s] (nothing known yet: 200 ms). The check costs nothing when it finds the
// request acknowledged, so a short bound only makes a dropped handshake cost less.
std::chrono::milliseconds first_byte_check_after(std::chrono::microseconds recent_first_byte);

// How long a connect may go unanswered before it is tried again: a SYN that a server's full
// backlog dropped is sent again by the kernel only after a second (then 3, 7, 15 s). Four times
// the origin's usual connect time, within [20 ms, 1 s] (nothing known yet: 250 ms).
std::chrono::milliseconds connect_check_after(std::chrono::microseconds usual_connect);

}  // namespace dibs::http
