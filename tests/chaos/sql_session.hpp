// One MariaDB session of the checker's own, on the client library directly: it reads whole
// result sets (the audit, every row) and, for the self-test, poses as a given process
// (@dibs_client_pid, which each dibs connection sets to its own pid) to write as a stale worker.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct st_mysql;

namespace dibs::chaos {

class sql_session {
 public:
  using row = std::vector<std::optional<std::string>>;
  // `uri`: mysql://user[:password]@host:port/db; `as_pid`: the @dibs_client_pid this session shows.
  sql_session(const std::string& uri, std::int64_t as_pid);
  ~sql_session();
  sql_session(const sql_session&) = delete;
  sql_session& operator=(const sql_session&) = delete;

  void execute(const std::string& sql);
  std::vector<row> rows(const std::string& sql);
  std::uint64_t number(const std::string& sql);  // the first cell, 0 when NULL
  std::string quote(const std::string& value);

 private:
  st_mysql* db_ = nullptr;
};

}  // namespace dibs::chaos
