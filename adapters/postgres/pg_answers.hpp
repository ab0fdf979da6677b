// The answers kept in the store on PostgreSQL (`reuse_answers store`; answer_store.hpp): one row
// per distinct request in the table `dibs_answers` (the search path's schema, next to the user's
// table, like dibs_rate), created on first use. A lookup is one SELECT aged by the server's
// clock_timestamp(); a keep one INSERT ... ON CONFLICT DO UPDATE per batch; each on a connection
// of its own whose statements end after 2 s (pg_side_connection.hpp).
#pragma once

#include <adapters/postgres/pg_side_connection.hpp>
#include <adapters/postgres/pg_store.hpp>

#include "engine/src/answer_store.hpp"

#include <memory>
#include <string>

namespace dibs::pg {

namespace answers_sql {
std::string create_table();
statement find(const answer_key& k, std::chrono::milliseconds ttl);  // answer, age in ms
statement keep(const std::vector<std::pair<answer_key, std::string>>& answers);  // distinct digests
}  // namespace answers_sql

class pg_answers final : public answer_store {
 public:
  // Creates the table when it is missing.
  explicit pg_answers(std::shared_ptr<pg_store> store);

  std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) override;
  void keep(const std::vector<std::pair<answer_key, std::string>>& answers) override;

 private:
  // Lookups and keeps on connections of their own: a 500-row keep must not hold up a leader's
  // lookup.
  pg_side_connection finds_;
  pg_side_connection keeps_;
};

}  // namespace dibs::pg
