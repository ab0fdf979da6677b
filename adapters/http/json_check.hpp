// Validation of an API body with simdjson's on-demand parser: the body must be exactly one JSON
// object (nothing after it), every value well-formed, nesting bounded. The parser is reused: one
// per shard, so validation allocates nothing in the steady state.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <string>

namespace dibs::http {

struct json_check_result {
  bool ok = false;
  std::string error;           // why it is not an acceptable object
  std::string status;          // top-level "status" when it is a string (ip-api says "success"/"fail")
  std::string message;         // top-level "message" when it is a string
  std::string query;           // top-level "query" when it is a string (ip-api echoes the key)
};

// `body` must have SIMDJSON_PADDING bytes of capacity beyond its size: the function reserves
// them itself, which is why it takes the string by reference.
json_check_result check_json_object(simdjson::ondemand::parser& parser, std::string& body,
                                    std::size_t max_depth = 64);

}  // namespace dibs::http
