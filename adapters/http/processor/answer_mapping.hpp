// An answer mapped (answer_map.hpp): pure, unit-tested in tests/unit/test_answer_map.cpp.
#pragma once

#include <dibs/http/answer_map.hpp>

#include "json_pointer_eval.hpp"

#include <string>

namespace dibs::http {

// {"country":"FR","city":"Paris","lat":48.85}: each entry's value as compact JSON, in the map's
// order; null for a member the answer lacks.
std::string mapped_object(const answer_map& map, simdjson::dom::element answer);

}  // namespace dibs::http
