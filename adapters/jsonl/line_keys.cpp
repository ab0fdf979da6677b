#include <dibs/stores/line_keys.hpp>

#include "json_members.hpp"

#include "engine/src/log_escape.hpp"
#include <dibs/setting_error.hpp>

#include <simdjson.h>

#include <stdexcept>

namespace dibs::jsonl {

std::optional<std::string> line_key(std::string_view line, std::string_view field, std::string& problem) {
  const std::string name(field);
  const auto text = member_text(line, field);
  if (!text) {
    problem = "has no '" + name + "'";
    return std::nullopt;
  }
  simdjson::dom::parser p;
  simdjson::dom::element v;
  if (p.parse(std::string(*text)).get(v)) {  // member_text comes from a line that parsed: can't happen
    problem = "has a '" + name + "' that is not JSON";
    return std::nullopt;
  }
  std::string key;
  if (v.is_string()) {
    key = std::string(std::string_view(v));
  } else if (v.is_number()) {
    key = std::string(*text);
  } else {
    const char* what = v.is_object() ? "an object" : v.is_array() ? "an array" : v.is_null() ? "null" : "a boolean";
    problem = "has '" + name + "': " + what + ", not a string or a number";
    return std::nullopt;
  }
  if (key.empty()) {
    problem = "has an empty '" + name + "'";
    return std::nullopt;
  }
  return key;
}

void line_keys::add(std::size_t line, std::string key) {
  line_of_key.emplace(key, line);
  key_of_line.emplace(line, std::move(key));
}

line_keys read_line_keys(std::string_view text, const std::string& field, const std::string& file) {
  line_keys keys;
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    const auto line = text.substr(at, end - at);
    at = end + 1;
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::optional<std::string> key;
    if (!top_level_members(line)) {
      // Not an object, or not JSON at all (`{"ip":"1.2.3.4","x":tru}` starts like one and is an
      // item that will fail): it has no key to give, yet its name must find it again like any.
      key = "line " + std::to_string(n);
    } else {
      std::string problem;
      key = line_key(line, field, problem);
      if (!key)
        throw std::invalid_argument(setting_name("id_field") + " " + field + ": line " + std::to_string(n) + " of " + file + " " + problem +
                                    " (with " + setting_name("id_field") + " every line is named by it, so each needs its own)");
    }
    if (const auto seen = keys.line_of_key.find(*key); seen != keys.line_of_key.end())
      throw std::invalid_argument(setting_name("id_field") + " " + field + ": lines " + std::to_string(seen->second) + " and " +
                                  std::to_string(n) + " of " + file + " both have '" + log::escape_controls(*key) +
                                  "' (a name must find its one line again)");
    keys.add(n, std::move(*key));
  }
  return keys;
}

}  // namespace dibs::jsonl
