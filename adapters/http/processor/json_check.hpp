// Validation of an API body with simdjson's on-demand parser: the body must be exactly one JSON
// object (nothing after it), every value well-formed, nesting bounded. The parser is reused: one
// per shard, so validation allocates nothing in the steady state.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dibs::http {

struct json_check_result {
  bool ok = false;
  std::string error;  // why it is not an acceptable object
  // The top-level members asked for (`capture`) whose values are strings, in body order. What an
  // API means by them is its profile's business (ip-api: ipapi_profile.hpp), not this check's.
  std::vector<std::pair<std::string, std::string>> captured;

  // A captured member's value; nullopt when absent or not a string.
  std::optional<std::string_view> member(std::string_view name) const;
};

// `body` must have SIMDJSON_PADDING bytes of capacity beyond its size: the function reserves
// them itself, which is why it takes the string by reference.
json_check_result check_json_object(simdjson::ondemand::parser& parser, std::string& body,
                                    std::size_t max_depth = 64, const std::vector<std::string>& capture = {});

}  // namespace dibs::http
