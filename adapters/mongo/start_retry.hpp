// A store's first round trips meet whatever the link does at that moment: a server restarting,
// a connection reset or refused. MongoDB's drivers keep trying to select a server until
// serverSelectionTimeoutMS; a start-up command whose connection failed is tried again likewise,
// so that a store starts whenever the server answers within that time, and a worker restarted
// into a flaky link does not exit for one reset.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>

#include <dibs/log.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace dibs::mongo {

// True for a failure of the connection (reset, closed, timed out, no server selected), not an
// answer of the server: the same command may well succeed on the next connection.
inline bool connection_failed(std::uint32_t domain) {
  return domain == MONGOC_ERROR_STREAM || domain == MONGOC_ERROR_SERVER_SELECTION;
}

// Runs `start` again after each connection failure until `budget` has passed since the first
// try (short pauses between tries); any other error, or the last failure, goes to the caller.
template <class Start>
void start_within(std::chrono::milliseconds budget, Start start) {
  const auto give_up_at = std::chrono::steady_clock::now() + budget;
  auto pause = std::chrono::milliseconds(50);
  for (;;) {
    try {
      start();
      return;
    } catch (const mongo_error& e) {
      if (!connection_failed(e.domain) || std::chrono::steady_clock::now() + pause >= give_up_at) throw;
      log::debug("mongodb: starting: ", e.what(), "; trying again in ", pause.count(), " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
}

}  // namespace dibs::mongo
