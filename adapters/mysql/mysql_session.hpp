// What a statement runner needs of a MySQL/MariaDB connection: run a statement, read rows,
// quote a value. mysql_store's pooled connections are this; mysql_store::in_session lends one.
#pragma once

#include <adapters/mysql/claimed_rows.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dibs::mysql {

class mysql_session {
 public:
  virtual ~mysql_session() = default;
  virtual void execute(const std::string& sql) = 0;
  virtual std::vector<sql_row> select(const std::string& sql) = 0;
  virtual std::string quote(const std::string& value) = 0;
  // Rows the last statement changed (MySQL counts a row set to what it held as unchanged).
  virtual std::uint64_t affected() = 0;
};

}  // namespace dibs::mysql
