#include "mysql_workers.hpp"
#include "adapters/mysql/mysql_quote.hpp"

namespace dibs::mysql {

namespace {
// The open rows that hold a lease (stats() counts them as leased_live + leased_expired).
constexpr const char* leased = "`dibs_open` = 1 AND `dibs_lock_token` IS NOT NULL";
}  // namespace

std::string lease_holders(const table_names& n) {
  return "SELECT COALESCE(`dibs_lock_by`, ''), COUNT(*), COALESCE(SUM(`dibs_lock_until` < NOW(6)), 0), "
         "TIMESTAMPDIFF(MICROSECOND, NOW(6), MIN(`dibs_lock_until`)), TIMESTAMPDIFF(MICROSECOND, NOW(6), MAX(`dibs_lock_until`)) FROM " + q(n.table) + " WHERE " + leased +
         " GROUP BY COALESCE(`dibs_lock_by`, '') ORDER BY COALESCE(`dibs_lock_by`, '')";
}

std::string release_worker(const table_names& n, const std::string& name_quoted, const std::string& prefix_quoted,
                           std::size_t prefix_chars) {
  const auto len = std::to_string(prefix_chars);
  return "UPDATE " + q(n.table) + " SET `dibs_lock_by` = NULL, `dibs_lock_token` = NULL, `dibs_lock_until` = NULL WHERE " + leased +
         " AND (BINARY `dibs_lock_by` = BINARY " + name_quoted + " OR (BINARY LEFT(`dibs_lock_by`, " + len + ") = BINARY " +
         prefix_quoted + " AND CHAR_LENGTH(`dibs_lock_by`) > " + len + " AND SUBSTRING(`dibs_lock_by`, " + len +
         " + 1) REGEXP '^[0-9]+$'))";
}

}  // namespace dibs::mysql
