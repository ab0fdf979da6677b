// Faults only a PostgreSQL round injects (the restart is pg_round's): worker sessions killed from
// the server's side, and a session idle in a transaction that holds some open rows locked.
#pragma once

#include "pg_session.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace dibs::chaos {

// pg_terminate_backend() on every worker's session (application_name dibs-<pid>): the server
// ends them mid-statement or between two; returns how many it ended.
std::uint64_t terminate_worker_sessions(const std::string& uri);

// BEGIN; SELECT ... FOR UPDATE SKIP LOCKED on up to `rows` open rows, taken at random (pending
// ones and leased ones alike), then idle in the transaction for `hold` (longer than the lease),
// then ROLLBACK: claims must pass those rows by (SKIP LOCKED), and a worker's renewal or
// completion of a locked row waits for the lock, then goes on; nothing may stay stuck.
class idle_transaction {
 public:
  idle_transaction(const std::string& uri, const std::string& table, int rows, std::chrono::milliseconds hold);
  ~idle_transaction();  // rolls back at once if still holding, and waits for that
  idle_transaction(const idle_transaction&) = delete;
  idle_transaction& operator=(const idle_transaction&) = delete;

  std::uint64_t locked() const { return locked_; }
  bool over();  // rolled back (or its session lost)

 private:
  void hold_then_roll_back(std::chrono::milliseconds hold);
  std::unique_ptr<pg_session> session_;
  std::uint64_t locked_ = 0;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false, over_ = false;
  std::thread thread_;
};

}  // namespace dibs::chaos
