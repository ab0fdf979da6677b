#include "ipapi_profile.hpp"

namespace dibs::http::ipapi {

const std::vector<std::string>& members() {
  static const std::vector<std::string> names{"status", "message", "query"};
  return names;
}

std::optional<std::string> no_data_reason(const json_check_result& answer) {
  if (answer.member("status") != "fail") return std::nullopt;
  const auto message = answer.member("message").value_or("");
  return "the API has no data: " + (message.empty() ? std::string("status fail") : std::string(message));
}

std::string_view answered_key(const json_check_result& answer) { return answer.member("query").value_or(""); }

std::string batch_body(const std::string& key_field) { return "[{" + key_field + "}]"; }

}  // namespace dibs::http::ipapi
