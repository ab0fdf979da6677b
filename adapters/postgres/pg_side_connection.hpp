// One connection of its own beside a pg_store's pool, for dibs's own tables (dibs_rate,
// dibs_answers): made on first use, replaced when the link is lost (and the call tried once
// more), one call at a time. Every call on it is one autocommitted statement, and ends after 2 s
// (statement_timeout, lock_timeout): someone's open transaction on dibs's table must not hold a
// request's rate or answer, or the process's exit, for longer.
#pragma once

#include <adapters/postgres/pg_store.hpp>

#include <memory>
#include <mutex>
#include <string>

namespace dibs::pg {

class pg_side_connection {
 public:
  explicit pg_side_connection(std::shared_ptr<pg_store> store) : store_(std::move(store)) {}

  // f(pg_connection&)'s result; pg_error when it failed, or failed twice on a lost link.
  template <class F>
  auto with(F f) {
    std::lock_guard lock(mutex_);
    for (int attempt = 0;; ++attempt) {
      try {
        if (!conn_ || !conn_->usable()) {
          conn_.reset();  // in use only once its bounds are set
          auto fresh = store_->connect_blocking();
          fresh->exec_blocking({"SELECT set_config('statement_timeout', '2000', false), "
                                "set_config('lock_timeout', '2000', false)", {}});
          conn_ = std::move(fresh);
        }
        return f(*conn_);
      } catch (const pg_error& e) {
        if (!connection_lost(e.sqlstate) || attempt > 0) throw;
        conn_.reset();
      }
    }
  }

  // CREATE TABLE IF NOT EXISTS `create`: processes starting together race in it and may meet the
  // other's new table (42P07) or its row type (23505 in the catalog's index, or 42710: type
  // "dibs_rate" already exists, seen with four processes starting at once); either way the table
  // is there.
  void create_table(const std::string& create) {
    try {
      with([&](pg_connection& c) { return c.exec_blocking({create, {}}); });
    } catch (const pg_error& e) {
      if (e.sqlstate != "42P07" && e.sqlstate != "23505" && e.sqlstate != "42710") throw;
    }
  }

 private:
  std::shared_ptr<pg_store> store_;
  std::mutex mutex_;
  std::unique_ptr<pg_connection> conn_;
};

}  // namespace dibs::pg
