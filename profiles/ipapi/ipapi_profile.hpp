// What ip-api's answers mean beyond being a JSON object: the one place that knows it. An answer
// {"status":"fail","message":"private range"} says "no data for this key": the item fails with
// that message (no retry would change it). A batch answer's elements echo their key in "query",
// which tells an answer put in the wrong place: its batch is a template of the general path. Processors apply this profile when their
// `status_field_check` option is on (the CLI: unless --no-status-check).
#pragma once

#include "adapters/http/processor/json_check.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http::ipapi {

// The top-level members the profile reads, for check_json_object's `capture`.
const std::vector<std::string>& members();

// The item failure reason when the answer says the API has no data for the key; nullopt otherwise.
std::optional<std::string> no_data_reason(const json_check_result& answer);

// The key the answer says it is for ("" when it does not say).
std::string_view answered_key(const json_check_result& answer);

// ip-api's batch (POST /batch) as a batch template (batch_processor_options): a JSON array of
// the keys in `key_field`, each answer in its key's place, naming its key in "query".
std::string batch_body(const std::string& key_field);
inline constexpr const char* batch_item = "/{i}";
inline constexpr const char* batch_echo = "query";

}  // namespace dibs::http::ipapi
