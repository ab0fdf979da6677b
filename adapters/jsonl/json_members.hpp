// Members of one JSON Lines line: where the source is (a dotted path as a JSON pointer), and the
// line with the target set. Plain functions, for tests and fuzzing.
#pragma once

#include <string>
#include <vector>

namespace dibs::jsonl {

// A dotted path as a JSON pointer: "a.b" -> "/a/b" (with ~ and / escaped).
std::string json_pointer_of(const std::string& dotted);

// `line` (a JSON object) with `field` set to `value_json` (replacing it if present, keeping every
// other member as written; a "failed" member is dropped), and `extra` ("" or `"k":v`) appended.
// Empty when `line` is not one JSON object.
std::string with_field(const std::string& line, const std::string& field, const std::string& value_json,
                       const std::string& extra = {});

// The names of `line`'s top-level members, in order; empty when it is not one JSON object.
std::vector<std::string> member_names(const std::string& line);

}  // namespace dibs::jsonl
