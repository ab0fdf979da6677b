#include "pg_faults.hpp"

namespace dibs::chaos {

std::uint64_t terminate_worker_sessions(const std::string& uri) {
  pg_session s(uri, "dibs-chaos-terminator");
  return s.number("SELECT count(*) FILTER (WHERE ended) FROM (SELECT pg_terminate_backend(pid) AS ended FROM "
                  "pg_stat_activity WHERE application_name ~ '^dibs-[0-9]+$' AND pid <> pg_backend_pid()) x");
}

idle_transaction::idle_transaction(const std::string& uri, const std::string& table, int rows, std::chrono::milliseconds hold)
    : session_(std::make_unique<pg_session>(uri, "dibs-chaos-idle-in-transaction")) {
  // Never waits itself: SKIP LOCKED, and a bound on the statement should the server stall.
  session_->execute("SET statement_timeout = '10s'");
  session_->execute("BEGIN");
  locked_ = session_->rows("SELECT id FROM " + table + " WHERE location IS NULL AND dibs_failed_at IS NULL ORDER BY random() "
                           "LIMIT " + std::to_string(rows) + " FOR UPDATE SKIP LOCKED").size();
  thread_ = std::thread([this, hold] { hold_then_roll_back(hold); });
}

idle_transaction::~idle_transaction() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool idle_transaction::over() {
  std::lock_guard lock(m_);
  return over_;
}

void idle_transaction::hold_then_roll_back(std::chrono::milliseconds hold) {
  {
    std::unique_lock lock(m_);
    cv_.wait_for(lock, hold, [this] { return stop_; });  // the fault's length, not a synchronization
  }
  try {
    session_->execute("ROLLBACK");
  } catch (const std::exception&) {
    // The session was lost (a server restart): its transaction ended with it.
  }
  session_.reset();
  std::lock_guard lock(m_);
  over_ = true;
}

}  // namespace dibs::chaos
