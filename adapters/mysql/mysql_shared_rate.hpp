// The shared rate's record on MySQL/MariaDB (`rate_scope store`; shared_rate_store.hpp): one
// row per API origin in the table `dibs_rate` of the store's database, created on first use
// (CREATE TABLE IF NOT EXISTS; it is dibs's own table, next to the user's). No transaction: a
// block is an INSERT IGNORE of the row (a deleted row comes back), one UPDATE that moves the
// schedule on by the server's SYSDATE(6) and leaves the block's start in session variables, and a
// SELECT of them; a pause is one INSERT ... ON DUPLICATE KEY UPDATE. Each statement commits by
// itself, so the row is never locked across round trips (rate_bucket.hpp: the same arithmetic).
#pragma once

#include <dibs/stores/mysql_store.hpp>

#include "engine/src/rate_bucket.hpp"
#include "engine/src/shared_rate_store.hpp"

#include <memory>
#include <string>

namespace dibs::mysql {

// The statements, as pure functions of quoted values (tests read them).
namespace rate_sql {
std::string create_table();
std::string ensure_row(const std::string& origin_quoted);
// Moves the schedule `span_us` on in one autocommitted statement, leaving where the block starts
// and the server's now in the session's @dibs_start and @dibs_now.
std::string take_span(const std::string& origin_quoted, std::int64_t span_us);
std::string taken_row(const std::string& origin_quoted);  // @dibs_start, paused_until_us, @dibs_now
std::string read_row(const std::string& origin_quoted);  // tat_us, paused_until_us, the server's now in us
std::string pause_row(const std::string& origin_quoted, std::int64_t for_us);
}  // namespace rate_sql

class mysql_shared_rate final : public shared_rate_store {
 public:
  // Creates the table when it is missing.
  explicit mysql_shared_rate(std::shared_ptr<mysql_store> store);

  rate_block take_block(const rate_block_request& r) override;
  void pause(const std::string& origin, std::chrono::microseconds for_) override;
  std::chrono::microseconds paused_for(const std::string& origin) override;

 private:
  std::shared_ptr<mysql_store> store_;
};

}  // namespace dibs::mysql
