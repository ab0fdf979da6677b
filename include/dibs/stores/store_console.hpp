// What a database store lets dibs's own tools do beside the job protocol (dibs bench): count the
// statements it sends, and, for the SQL stores, run a statement of the tool's own (the bench marks
// and drops its scratch tables with it). Capabilities, found with dynamic_cast: the tool need not
// know the store's type, and a new store that can do one says so by deriving from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dibs {

class counted_statements {
 public:
  virtual ~counted_statements() = default;
  // Statements (MongoDB: commands) sent since the store opened; nullopt when the store was not
  // opened to count them (MongoDB without count_commands: monitoring copies every bulk write).
  virtual std::optional<std::uint64_t> statements_sent() const = 0;
};

class sql_console {
 public:
  virtual ~sql_console() = default;
  // Runs one statement (several joined by ';' where the server takes them).
  virtual void execute(const std::string& statement) = 0;
  // The first row's first cell of a query; nullopt for NULL or no row.
  virtual std::optional<std::string> query_value(const std::string& select) = 0;
};

}  // namespace dibs
