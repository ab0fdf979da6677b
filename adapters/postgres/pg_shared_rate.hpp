// The shared rate's record on PostgreSQL (`rate_scope store`; shared_rate_store.hpp): one row
// per API origin in the table `dibs_rate` (the search path's schema, next to the user's table),
// created on first use. Every call is one autocommitted statement on a connection of its own
// (INSERT ... ON CONFLICT DO UPDATE ... RETURNING, by the server's clock_timestamp()), so the row
// is never locked across round trips. A lost link is replaced and the call tried once more.
#pragma once

#include <adapters/postgres/pg_side_connection.hpp>
#include <adapters/postgres/pg_store.hpp>

#include "engine/src/rate_bucket.hpp"
#include "engine/src/shared_rate_store.hpp"

#include <memory>
#include <string>

namespace dibs::pg {

namespace rate_sql {
std::string create_table();
// One statement each, autocommitted: the row is never locked across round trips, so a process
// frozen mid-way holds no other process back.
statement take_span(const std::string& origin, std::int64_t span_us);  // block start, paused_until_us, now (us)
statement read_row(const std::string& origin);                          // tat_us, paused_until_us, now (us)
statement pause_row(const std::string& origin, std::int64_t for_us);
}  // namespace rate_sql

class pg_shared_rate final : public shared_rate_store {
 public:
  // Creates the table when it is missing.
  explicit pg_shared_rate(std::shared_ptr<pg_store> store);

  rate_block take_block(const rate_block_request& r) override;
  void pause(const std::string& origin, std::chrono::microseconds for_) override;
  std::chrono::microseconds paused_for(const std::string& origin) override;

 private:
  pg_side_connection side_;
};

}  // namespace dibs::pg
