// What a request to the engine's controls (control_server.hpp) may look like on the wire, and the
// bounds that keep one connection's memory at a few KB whatever its peer sends.
//
// Beast bounds a request's header (header_limit) and body (body_limit), but Boost 1.81 does not
// bound the chunk-size lines, chunk extensions and trailers of a chunked body (the fix is
// boostorg/beast#3077, in a later Boost): a peer that sends "Transfer-Encoding: chunked", then
// "1;x=" and endless bytes grows the read buffer until the request times out (5 s of that on
// GET /status once took a process to 4 GB). The controls take small JSON bodies that every
// client sends with a Content-Length, so:
//   - a request with Transfer-Encoding is refused (411) as soon as its header is read, before any
//     of its body is parsed;
//   - the read buffer has a maximum (header + body bounds): whatever Beast's parser does not
//     bound, the buffer does;
//   - who may send what (control_access.hpp: Host, the peer's address, the key) is decided from
//     the header, before the body is read;
//   - a header that the checks read (Host, Origin, the key and token headers) given twice is
//     refused (400): proxies and parsers disagree on which of two copies counts.
#pragma once

#include "control_access.hpp"

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/fields.hpp>

#include <cstddef>
#include <optional>

namespace dibs::http {

struct control_limits {
  static constexpr std::size_t header_bytes = 8 * 1024;  // a browser's headers, cookies of other localhost apps included
  static constexpr std::size_t body_bytes = 4 * 1024;    // the largest control body is a worker id or a failure reason
  // The read buffer's maximum: one request's header and body (what follows it waits in the socket).
  static constexpr std::size_t buffer_bytes = header_bytes + body_bytes;
};

// nullopt: the header may be answered; else 411 (Transfer-Encoding) or 400 (a checked header
// twice).
std::optional<refusal> check_framing(const boost::beast::http::fields& head);

// A read that failed: the answer the peer gets before the connection is closed (431 header too
// large, 413 body too large, 400 malformed), or nullopt when there is no one to answer (the peer
// closed, the time ran out).
std::optional<refusal> read_failure_answer(const boost::system::error_code& ec, bool header_done);

}  // namespace dibs::http
