// LISTEN for follow: a connection of its own, on a thread of its own, that waits for the
// table's channel (pg_protocol.hpp: notify_channel) and calls `on_change` for each notification,
// so that idle shards claim new rows at once instead of at their next poll. Polling stays: this
// only wakes them earlier. A lost connection is replaced (with backoff), and `on_change` is called
// once it is back, for what may have been announced while it was gone.
#pragma once

#include <adapters/postgres/pg_connection.hpp>
#include <adapters/postgres/pg_protocol.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace dibs::pg {

class pg_listener {
 public:
  pg_listener(connect_settings link, table_names names, std::string shown_uri);
  ~pg_listener() { stop(); }
  pg_listener(const pg_listener&) = delete;
  pg_listener& operator=(const pg_listener&) = delete;

  // Connects and LISTENs here, so that a failure is known (and logged) before returning: false.
  bool start(std::function<void()> on_change);
  // Ends the thread at once (an eventfd wakes its wait); safe to call when not started.
  void stop();

 private:
  void run(std::unique_ptr<pg_connection> conn);
  std::unique_ptr<pg_connection> connect_and_listen();
  // Waits up to `d` unless stop() is called; false once stopping.
  bool pause(std::chrono::milliseconds d);

  connect_settings link_;
  table_names names_;
  std::string shown_;
  std::function<void()> on_change_;
  int wake_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> running_{false};
};

}  // namespace dibs::pg
