// Keeps the store's server_clock measured: `hello` (or `isMaster` on old servers) at start, and
// again when a claim finds the last measurement older than the refresh interval.
#pragma once

#include <adapters/mongo/connection.hpp>
#include <adapters/mongo/server_clock.hpp>

#include <atomic>
#include <chrono>

namespace dibs::mongo {

class clock_sync {
 public:
  clock_sync(const connection& conn, std::chrono::seconds refresh) : conn_(conn), refresh_(refresh) {}

  // One measurement; throws mongo_error when the server can't be reached.
  void measure();
  // Measures again when the refresh interval has passed (steady time: immune to wall-clock steps).
  // One refresher at a time is enough; a failure keeps the old estimate and is logged.
  void refresh_if_due();

  store_time now() const { return clock_.now(); }
  std::chrono::milliseconds offset() const { return clock_.offset(); }

 private:
  const connection& conn_;
  std::chrono::seconds refresh_;
  server_clock clock_;
  std::atomic<std::int64_t> last_check_ns_{0};
};

}  // namespace dibs::mongo
