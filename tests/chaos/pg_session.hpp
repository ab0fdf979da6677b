// One blocking PostgreSQL session of the chaos driver's own (pg_connection's blocking calls): it
// reads whole result sets (the audit, every row), injects faults (an idle transaction, the
// termination of worker sessions) and, for the self-test, poses as a given process: the audit
// trigger knows a writer by its session's application_name, `dibs-<pid>` (pg_round names every
// worker's sessions so), and a session named otherwise is no worker's.
#pragma once

#include <adapters/postgres/pg_connection.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs::chaos {

class pg_session {
 public:
  using row = std::vector<std::optional<std::string>>;
  using params = std::vector<std::optional<std::string>>;
  // `uri`: postgresql://... (a table= parameter is dropped); `name`: its application_name.
  pg_session(const std::string& uri, const std::string& name);

  // The name a session posing as process `pid` takes (what the audit trigger reads back).
  static std::string as_process(std::int64_t pid) { return "dibs-" + std::to_string(pid); }

  void execute(const std::string& sql, params p = {});
  std::vector<row> rows(const std::string& sql, params p = {});
  std::uint64_t number(const std::string& sql, params p = {});  // the first cell, 0 when NULL
  static std::string quote(const std::string& value);            // a SQL string literal

 private:
  std::unique_ptr<pg::pg_connection> conn_;
};

}  // namespace dibs::chaos
