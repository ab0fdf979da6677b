// What answers mean "the API has no data for this item": an HTTP status (404 from a lookup API)
// or a member's value (ip-api's "/status" being "fail"). Such an item ends done with that answer,
// counted as no data (outcome::no_data), never asked again; not a failure (or, with
// no_data_fails, a failure with the reason). ip-api's profile (profiles/ipapi) is this rule with
// "/status=fail" plus its own key check.
#pragma once

#include <dibs/http/json_pointer.hpp>

#include <string>
#include <vector>

namespace dibs::http {

struct no_data_rules {
  std::vector<int> statuses;  // an answer with one of these statuses
  struct member_is {
    json_pointer at;
    std::string equals;  // a string's own text, or another value's JSON ("0", "false", "null")
  };
  std::vector<member_is> members;  // an answer whose member at `at` is `equals` (any of them)

  bool empty() const { return statuses.empty() && members.empty(); }
  bool by_status(int status) const;
};

// "/status=fail" (POINTER=VALUE; the value's text after the first '='). Throws
// std::invalid_argument naming `setting` when there is no '=' or no JSON Pointer before it.
no_data_rules::member_is parse_member_is(const std::string& text, const std::string& setting);

}  // namespace dibs::http
