// The flags that say what an answer means: which statuses or members mean "no data for this
// item" (--no-data-on 404, --no-data-when /status=fail), beside ip-api's own rule
// (--no-status-check, --no-data-fails: api_flags).
#pragma once

#include <dibs/http/answer_map.hpp>
#include <dibs/http/json_pointer.hpp>
#include <dibs/http/no_data_rules.hpp>

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dibs::cli {

struct answer_flags {
  std::vector<int> no_data_on;            // statuses
  std::vector<std::string> no_data_when;  // POINTER=VALUE
  std::vector<std::string> map;           // NAME=/POINTER,...
  std::string expect_json;                // POINTER
  // --map's values as one text (dibs/field_mapping.hpp), as a store records it.
  std::string map_text() const;

  void add_to(CLI::App& cmd, const std::string& group);
  // Parsed; throws std::invalid_argument naming the flag.
  http::no_data_rules no_data() const;
  http::answer_map answer_map() const;
  std::optional<http::json_pointer> expect_json_pointer() const;
};

}  // namespace dibs::cli
