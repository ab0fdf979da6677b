#include <dibs/log.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace dibs::log {

namespace {
std::atomic<level> g_level{level::warn};
std::mutex g_mutex;
const char* name(level l) {
  switch (l) {
    case level::debug: return "debug";
    case level::info: return "info";
    case level::warn: return "warn";
    case level::error: return "error";
    default: return "";
  }
}
}  // namespace

void set_level(level l) { g_level = l; }
level current_level() { return g_level; }

bool parse_level(const std::string& text, level& out) {
  static const std::pair<const char*, level> names[] = {
      {"debug", level::debug}, {"info", level::info}, {"warn", level::warn},
      {"error", level::error}, {"off", level::off}};
  for (const auto& [n, l] : names)
    if (text == n) {
      out = l;
      return true;
    }
  return false;
}

void write(level l, const std::string& line) {
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "dibs %s: %s\n", name(l), line.c_str());
}

}  // namespace dibs::log
