#include <dibs/http/no_data_rules.hpp>

#include "no_data_verdict.hpp"

#include <algorithm>
#include <stdexcept>

namespace dibs::http {

bool no_data_rules::by_status(int status) const {
  return std::find(statuses.begin(), statuses.end(), status) != statuses.end();
}

no_data_rules::member_is parse_member_is(const std::string& text, const std::string& setting) {
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument(setting + " '" + text + "': expected POINTER=VALUE, like /status=fail");
  std::string why;
  auto p = json_pointer::parse(text.substr(0, eq), &why);
  if (!p || p->tokens().empty())
    throw std::invalid_argument(setting + " '" + text + "': " + (p ? "name a member, like /status" : why));
  return {std::move(*p), text.substr(eq + 1)};
}

std::optional<std::string> no_data_by_member(const no_data_rules& rules, simdjson::dom::element answer) {
  for (const auto& m : rules.members)
    if (auto v = evaluate(m.at, answer); v && plain_text(*v) == m.equals) {
      std::string why = "the answer's " + m.at.text() + " is " + json_text(*v);
      // The API's own words, when it gives them where most do.
      for (const char* said : {"/message", "/error", "/reason"})
        if (auto w = evaluate(*json_pointer::parse(said), answer); w && w->is_string())
          return why + " (" + plain_text(*w).substr(0, 200) + ")";
      return why;
    }
  return std::nullopt;
}

std::string no_data_answer_json(int status, std::string_view body, bool body_is_object) {
  if (body_is_object) return std::string(body);
  return "{\"no_data\":\"HTTP " + std::to_string(status) + "\"}";
}

}  // namespace dibs::http
