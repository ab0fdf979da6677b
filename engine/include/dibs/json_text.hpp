// JSON string literals for the text dibs writes itself (logs, journals, documents, request
// bodies): quotes, backslashes and control characters escaped; other bytes kept as they are.
#pragma once

#include <string>
#include <string_view>

namespace dibs {

void append_json_string(std::string& out, std::string_view s);
std::string json_string(std::string_view s);

}  // namespace dibs
