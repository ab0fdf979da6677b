// Members of one JSON Lines line: where the source is (a dotted path as a JSON pointer), where each
// top-level member's bytes are, and the line with one member set or removed. Plain functions, for
// tests and fuzzing.
//
// A line is the user's: dibs changes only the member it writes (the target, or its own "_dibs"),
// in place, and every other byte -- the order of members, their spacing, numbers as written, a
// trailing '\r' -- stays as it was.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::jsonl {

// The member dibs keeps its own record of a line under in file mode's output (a failure, and
// for a line that is not an object its number and text): a name of its own, so that a user's
// "failed", "error" or "line" is never read or overwritten. A line's "_dibs" is taken as an
// earlier run's record: replaced on a failed line, removed from a line done now.
inline constexpr std::string_view own_member = "_dibs";

// A dotted path as a JSON pointer: "a.b" -> "/a/b" (with ~ and / escaped).
std::string json_pointer_of(const std::string& dotted);

// One top-level member of a line, by byte offsets into it.
struct member_span {
  std::string key;          // unescaped
  std::size_t begin = 0;    // the key's opening quote
  std::size_t value_begin = 0, value_end = 0;  // the value's text, without the whitespace around it
};
struct object_layout {
  std::vector<member_span> members;  // in the line's order (a repeated key appears each time)
  std::size_t close = 0;             // the closing brace
};
// The layout of `line` when it is one JSON object (whitespace around it allowed); nullopt otherwise.
std::optional<object_layout> top_level_members(std::string_view line);

// `line` with member `name` set to `value_json`: each value of `name` replaced where it stands,
// or the member added last when the line has none; every other byte as it was.
// Empty when `line` is not one JSON object.
std::string with_member(std::string_view line, std::string_view name, std::string_view value_json);
// `line` without member `name` (each of them, with its comma); every other byte as it was.
// Empty when `line` is not one JSON object.
std::string without_member(std::string_view line, std::string_view name);
// The value's text of member `name` (the first one); nullopt when the line has none or is not an object.
std::optional<std::string_view> member_text(std::string_view line, std::string_view name);

// The names of `line`'s top-level members, in order; empty when it is not one JSON object.
std::vector<std::string> member_names(const std::string& line);

}  // namespace dibs::jsonl
