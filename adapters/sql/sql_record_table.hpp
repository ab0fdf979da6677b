// dibs's own records (own_records.hpp) on a SQL store: record_sql's statements run over a link
// the store gives (the driver only moves bytes). Every statement is autocommitted: no row is
// locked across round trips.
#pragma once

#include <adapters/sql/record_sql.hpp>

#include <memory>

namespace dibs::sql_common {

// What a record statement is for: the link may run each kind on a connection of its own (a read
// never waits behind a large put) and bound a put's wait for a lock.
enum class record_use { create, read, write, put };

struct record_result {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::uint64_t affected = 0;
};

class record_link {
 public:
  virtual ~record_link() = default;
  // Runs `statements` in order, each autocommitted, on one session; their results.
  virtual std::vector<record_result> run(const std::vector<record_statement>& statements, record_use use) = 0;
  // The largest statement the server takes.
  virtual std::size_t max_statement_bytes() = 0;
};

// `create`: CREATE TABLE IF NOT EXISTS first.
std::shared_ptr<record_table> sql_record_table(std::shared_ptr<record_link> link, const record_dialect& d, record_kind kind,
                                               bool create);

}  // namespace dibs::sql_common
