#include <dibs/setting_error.hpp>

#include <atomic>

namespace dibs {

namespace {
std::atomic<setting_namer> namer{nullptr};
}  // namespace

void name_settings_with(setting_namer n) { namer.store(n); }

std::string setting_name(const std::string& setting) {
  const auto n = namer.load();
  return n ? n(setting) : setting;
}

}  // namespace dibs
