// The store's connection: the parsed URI and the client pool made from it, with the options dibs
// sets when the URI doesn't (timeouts, appname, write concern). Every driver call borrows a client
// from here for its duration.
#pragma once

#include <adapters/mongo/driver_handles.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dibs::mongo {

class connection {
 public:
  // Parses `uri` and makes the pool (no round trip yet). Throws std::invalid_argument for a bad
  // URI or option; messages name the URI as redact_uri() shows it, never the password.
  // `count_commands`: count the commands sent (command monitoring), for commands_sent().
  connection(const std::string& uri, std::size_t clients, bool count_commands = false);

  const std::string& redacted() const { return redacted_; }
  // How long the driver looks for a server before a command fails (the URI's, else dibs's 5 s).
  std::chrono::milliseconds server_selection_timeout() const;
  pooled_client client() const { return pooled_client(pool_.get()); }
  // Commands sent since the pool was made, handshakes and server monitoring aside (0 unless counted).
  std::uint64_t commands_sent() const { return commands_->load(std::memory_order_relaxed); }

 private:
  std::string redacted_;
  uri_ptr uri_;
  client_pool_ptr pool_;
  // Boxed: the driver's monitor holds its address.
  std::unique_ptr<std::atomic<std::uint64_t>> commands_ = std::make_unique<std::atomic<std::uint64_t>>(0);
};

}  // namespace dibs::mongo
