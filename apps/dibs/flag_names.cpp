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
  std::string flag = "--" + setting;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string in_flag_words(const setting_error& e) { return flag_for(e.setting()) + " " + e.problem(); }

}  // namespace dibs::cli
