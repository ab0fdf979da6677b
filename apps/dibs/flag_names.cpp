#include "flag_names.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

namespace dibs::cli {

std::string flag_for(const std::string& setting) {
  // Settings whose flag is not the setting's name with '-' for '_'.
  static constexpr std::pair<std::string_view, std::string_view> renamed[] = {
      {"database", "--db"},
      {"threads", "--db-threads"},
  };
  for (const auto& [name, flag] : renamed)
    if (name == setting) return std::string(flag);
  // An environment variable (OTEL_EXPORTER_OTLP_HEADERS) is named as it is set.
  if (!setting.empty() && std::none_of(setting.begin(), setting.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
    return setting;
  std::string flag = "--" + setting;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string in_flag_words(const setting_error& e) { return flag_for(e.setting()) + " " + e.problem(); }

}  // namespace dibs::cli
