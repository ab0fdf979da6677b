// Keeps the store's server_clock measured: `hello` (or `isMaster` on old servers) at start, and
// again when a reading finds the last measurement older than the refresh interval.
//
// A refresh borrows no client when its caller holds one: it measures on the caller's. A caller
// that held a client while it waited for a second one could wait for ever once every client of
// the pool was held that way. Of the callers that find a refresh due at once, one measures
// (refresh_gate.hpp); the others go on with the estimate they have.
#pragma once

#include <adapters/mongo/connection.hpp>
#include <adapters/mongo/refresh_gate.hpp>
#include <adapters/mongo/server_clock.hpp>

#include <chrono>

namespace dibs::mongo {

class clock_sync {
 public:
  clock_sync(const connection& conn, std::chrono::seconds refresh) : conn_(conn), gate_(refresh) {}

  // One measurement, on a client borrowed for it (the caller holds none); throws mongo_error
  // when the server can't be reached.
  void measure();
  // Measures again when the refresh interval has passed (steady time: immune to wall-clock
  // steps), on `held`, the client the caller holds, or on one borrowed for it when the caller
  // holds none (nullptr). A failure keeps the old estimate and is logged.
  void refresh_if_due(mongoc_client_t* held);

  store_time now() const { return clock_.now(); }
  // The server read its clock somewhere within the measurement's round trip: its time now is
  // no earlier than earliest() and no later than latest(). A lease is taken over only once it
  // ran out by the earliest, and written under only while it holds by the latest, so a
  // measurement's error never lets a worker take a live lease or write under a lapsed one.
  store_time earliest() const { return clock_.now() - clock_.uncertainty(); }
  store_time latest() const { return clock_.now() + clock_.uncertainty(); }
  std::chrono::milliseconds uncertainty() const { return clock_.uncertainty(); }
  std::chrono::milliseconds offset() const { return clock_.offset(); }

 private:
  void measure_on(mongoc_client_t* c);

  const connection& conn_;
  server_clock clock_;
  refresh_gate gate_;
};

}  // namespace dibs::mongo
