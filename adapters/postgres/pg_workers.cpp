#include "pg_workers.hpp"
#include "adapters/postgres/pg_quote.hpp"

namespace dibs::pg {

namespace {
// The open rows that hold a lease (stats() counts them as leased_live + leased_expired).
std::string leased(const table_names& n) {
  return q(n.target) + " IS NULL AND \"dibs_failed_at\" IS NULL AND \"dibs_lock_token\" IS NOT NULL";
}
}  // namespace

statement lease_holders(const table_names& n) {
  statement s;
  s.sql = "SELECT coalesce(\"dibs_lock_by\", ''), count(*), count(*) FILTER (WHERE \"dibs_lock_until\" < now()), "
          "(extract(epoch from (min(\"dibs_lock_until\") - now())) * 1000000)::bigint, "
          "(extract(epoch from (max(\"dibs_lock_until\") - now())) * 1000000)::bigint FROM " + q(n.table) + " WHERE " +
          leased(n) + " GROUP BY 1 ORDER BY 1";
  return s;
}

statement release_worker(const table_names& n, const std::string& name) {
  statement s;
  // $2 is the name with '-': a shard's id is that, then its index (digits only).
  s.sql = "UPDATE " + q(n.table) + " SET \"dibs_lock_by\" = NULL, \"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL WHERE " +
          leased(n) + " AND (\"dibs_lock_by\" = $1::text OR (left(\"dibs_lock_by\", length($2::text)) = $2::text AND "
          "substr(\"dibs_lock_by\", length($2::text) + 1) ~ '^[0-9]+$'))";
  s.params.emplace_back(name);
  s.params.emplace_back(name + "-");
  return s;
}

}  // namespace dibs::pg
