// The store's connection: the parsed URI and the client pool made from it, with the options dibs
// sets when the URI doesn't (timeouts, appname, write concern). Every driver call borrows a client
// from here for its duration.
#pragma once

#include <adapters/mongo/driver_handles.hpp>

#include <cstddef>
#include <string>

namespace dibs::mongo {

class connection {
 public:
  // Parses `uri` and makes the pool (no round trip yet). Throws std::invalid_argument for a bad
  // URI or option; messages name the URI as redact_uri() shows it, never the password.
  connection(const std::string& uri, std::size_t clients);

  const std::string& redacted() const { return redacted_; }
  pooled_client client() const { return pooled_client(pool_.get()); }

 private:
  std::string redacted_;
  uri_ptr uri_;
  client_pool_ptr pool_;
};

}  // namespace dibs::mongo
