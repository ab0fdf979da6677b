// One connection of the HTTP client (client.hpp): a plain or a TLS stream, its read buffer and
// the parser of the answer being read. Internal to the client.
#pragma once

#include "connection_slots.hpp"
#include "response_reader.hpp"

#include <dibs/http/origin_limits.hpp>
#include <dibs/net.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <optional>

namespace dibs::http {

// The most an answer's header (and a chunked body's chunk lines and trailers, which Beast's
// limits do not cover) may take: the read buffer never grows past it, so a server sending an
// endless chunk extension or trailer costs a bounded buffer and a failed request, never memory.
inline constexpr std::size_t max_header_bytes = 64 * 1024;
inline constexpr std::size_t read_buffer_max = max_header_bytes + 16 * 1024;

struct connection {
  connection(const net::any_io_executor& ex, boost::asio::ssl::context* tls_context) {
    if (tls_context)
      tls.emplace(ex, *tls_context);
    else
      plain.emplace(ex);
  }
  ~connection() {
    if (served_by) served_by->connection_served(-1);
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  boost::beast::tcp_stream& tcp() { return tls ? tls->next_layer() : *plain; }

  std::optional<boost::beast::tcp_stream> plain;
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls;
  boost::beast::flat_buffer buffer{read_buffer_max};
  std::chrono::steady_clock::time_point idle_since{};  // when it went back to the pool
  // The connect that succeeded and the TLS handshake (not the quick retries before it: a SYN a
  // full backlog dropped is the server's overload, no cost of a connection).
  std::chrono::steady_clock::duration open_took{};
  // The parser of the answer being read: kept here, not in the request's coroutine frame, so that
  // frame stays small (a frame over about 1 KiB costs glibc a large-bin allocation, and a
  // consolidation of its fast bins, on every request).
  std::optional<response_reader> reader;
  // Its place among the pool's open connections (host_pool::opened), given back when it closes;
  // and, once it has answered, the origin whose count of served ones it is in
  // (origin_limit::connection_served).
  connection_slots::held open_slot;
  origin_limit* served_by = nullptr;
};

}  // namespace dibs::http
