// The command that prepares a store's table or collection, as a refusal tells it: the URI only
// redacted (the caller passes redact_uri's), quoted for a shell, with the source and target the
// user gave when they are not the defaults (so the columns it adds are the ones they use). The
// settings are named as the program names them (setting_error.hpp).
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/setting_error.hpp>

#include <string>

namespace dibs {

inline std::string init_hint(const std::string& redacted_uri, const std::string& source, const std::string& target) {
  std::string quoted = "'";
  for (char c : redacted_uri) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  std::string hint = "dibs init " + setting_name("store") + " " + quoted;
  if (source != dibs::ipapi::source_field) hint += " " + setting_name("source") + " " + source;
  if (target != dibs::ipapi::target_field) hint += " " + setting_name("target") + " " + target;
  return hint;
}

}  // namespace dibs
