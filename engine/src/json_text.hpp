// JSON text dibs writes itself (logs, journals, documents, request bodies): string literals with
// quotes, backslashes and control characters escaped (other bytes kept as they are), and an
// answer's JSON rewritten on one line.
#pragma once

#include <string>
#include <string_view>

namespace dibs {

void append_json_string(std::string& out, std::string_view s);
std::string json_string(std::string_view s);

// `json` without the whitespace between its tokens, and with any raw control character escaped
// (\u00XX): never a newline, whatever the input. Strings, numbers and the order of members are
// kept byte for byte, so valid JSON keeps its meaning exactly. An API that pretty-prints its
// answers is stored as one line, as every store and a JSON Lines journal need it.
[[nodiscard]] std::string compact_json(std::string_view json);
// The same, in place; a text with nothing to remove (ip-api's answers) is not copied.
void compact_json_in_place(std::string& json);

}  // namespace dibs
