// The no-data rules (no_data_rules.hpp) applied to one answer: pure, unit-tested without a server.
#pragma once

#include <dibs/http/no_data_rules.hpp>

#include "json_pointer_eval.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace dibs::http {

// Why `answer` says there is no data, by a member rule; nullopt when none matches.
std::optional<std::string> no_data_by_member(const no_data_rules& rules, simdjson::dom::element answer);

// What an item that got no data by its status keeps as its answer: the body when it is one JSON
// object (the API's own words), else {"no_data":"HTTP 404"}.
std::string no_data_answer_json(int status, std::string_view body, bool body_is_object);

}  // namespace dibs::http
