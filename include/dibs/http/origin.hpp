// Where requests go: scheme, host and port. The client pools its connections per origin.
#pragma once

#include <cstdint>
#include <string>

namespace dibs::http {

struct origin {
  std::string host;
  std::uint16_t port = 80;
  bool tls = false;  // https
};

}  // namespace dibs::http
