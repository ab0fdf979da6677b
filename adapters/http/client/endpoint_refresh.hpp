// When a connection pool looks its host's addresses up again. The resolver runs once per pool at
// a time; its answer is kept as one immutable list that a connect loop holds while it iterates,
// so a later lookup never changes a list in use. A name is looked up again when every address
// failed to connect (the host moved) and periodically (a DNS change is seen even while the old
// addresses still answer); an IP address is never looked up.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <vector>

namespace dibs::http {

struct endpoint_freshness {
  bool literal = false;   // the host is an IP address: its one endpoint never changes
  bool resolved = false;  // a lookup has succeeded
  std::chrono::steady_clock::time_point resolved_at{};
  bool all_failed = false;  // since that lookup, a connect failed on every address
};

// Whether the pool must look its host up before it opens a connection.
bool should_resolve(const endpoint_freshness& f, std::chrono::steady_clock::time_point now,
                    std::chrono::steady_clock::duration refresh_every);

// The addresses of a lookup in their order, each once (a resolver lists one address per socket
// type and protocol it knows, and /etc/hosts may repeat one).
std::vector<boost::asio::ip::tcp::endpoint> unique_endpoints(std::vector<boost::asio::ip::tcp::endpoint> found);

}  // namespace dibs::http
