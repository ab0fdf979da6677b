// A JSON Pointer evaluated on a parsed answer (RFC 6901 section 4): members by exact name, array
// elements by index; pure, unit-tested in tests/unit/test_json_pointer.cpp.
#pragma once

#include <dibs/http/json_pointer.hpp>

#include <simdjson.h>

#include <optional>
#include <string>

namespace dibs::http {

// The value `p` names in `doc`; nullopt when there is none (a missing member, an index past the
// end or not a number, a token applied to a string or number).
std::optional<simdjson::dom::element> evaluate(const json_pointer& p, simdjson::dom::element doc);

// A value as compact JSON ("fail" with its quotes, 48.5, {"a":1}).
std::string json_text(simdjson::dom::element e);
// A string's own text (without quotes or escapes), any other value as compact JSON.
std::string plain_text(simdjson::dom::element e);

}  // namespace dibs::http
