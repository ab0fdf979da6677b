// id_field NAME in file mode: each line named by the user's own key (the value of its top-level
// member NAME) instead of its line number, in logs, `dibs status`'s examples and GET /status.
// A name must find its line again (the engine hands it back with every write), so every object
// line needs one, and no two lines may share one. Pure functions, for tests.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dibs::jsonl {

// The key a line's member `field` gives: a string's text, or a number as written. nullopt when
// the line (an object) has no such member or it holds something else; `problem` then says what
// ("has no 'visit_id'", "has 'visit_id': an object, not a string or a number", "... is empty").
std::optional<std::string> line_key(std::string_view line, std::string_view field, std::string& problem);

struct line_keys {
  std::unordered_map<std::size_t, std::string> key_of_line;
  std::unordered_map<std::string, std::size_t> line_of_key;
  void add(std::size_t line, std::string key);  // the caller checked it is new
};

// The keys of `text`'s lines (a JSON Lines file's contents, `file` its name for messages): every
// non-blank line that is a JSON object must have a key; a line that is not one (or not JSON) is
// named "line N" (it fails, and its failure must find it again; a user's key "line N" for
// another line is refused as a shared name). Throws std::invalid_argument naming id_field, the line and
// the problem, or the two lines that share a key.
line_keys read_line_keys(std::string_view text, const std::string& field, const std::string& file);

}  // namespace dibs::jsonl
