// The API's JSON answer as BSON, through simdjson's on-demand parser: integers stay int64 (always,
// so a field's type never depends on its value), doubles stay double, nested objects and arrays are kept; strings with an embedded NUL are refused
// (BSON keys and C strings can't hold them), invalid UTF-8 is refused by simdjson's validation,
// and nesting deeper than `max_depth` is refused.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>

#include <simdjson.h>

#include <string>

namespace dibs::mongo {

struct json_to_bson_result {
  bson_ptr doc;       // set on success
  std::string error;  // what was wrong, on failure
};

// `json` must be one JSON object. The string's capacity is grown for simdjson's padding.
json_to_bson_result json_to_bson(simdjson::ondemand::parser& parser, std::string& json, std::size_t max_depth = 64);

}  // namespace dibs::mongo
