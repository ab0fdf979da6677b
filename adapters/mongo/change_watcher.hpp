// A change stream on the collection: calls `on_change` (from its own thread) for every insert,
// update or replace, so that follow wakes up at once instead of polling.
#pragma once

#include <adapters/mongo/connection.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace dibs::mongo {

class change_watcher {
 public:
  change_watcher(const connection& conn, std::string db, std::string collection)
      : conn_(conn), db_(std::move(db)), collection_(std::move(collection)) {}
  ~change_watcher() { stop(); }
  change_watcher(const change_watcher&) = delete;
  change_watcher& operator=(const change_watcher&) = delete;

  // Opens the stream here, so that "not supported" (standalone servers, the test stand-in) is
  // known before returning: false, logged. The stream is then read on its own thread
  // (mongoc_change_stream_next blocks up to maxAwaitTimeMS).
  bool start(std::function<void()> on_change);
  // Ends the thread (within maxAwaitTimeMS); safe to call when not started.
  void stop();

 private:
  const connection& conn_;
  std::string db_, collection_;
  std::thread thread_;
  std::atomic<bool> running_{false};
};

}  // namespace dibs::mongo
