// Leveled logging to stderr, one line per call, safe from any thread.
#pragma once

#include <sstream>
#include <string>
#include <utility>

namespace dibs::log {

enum class level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

void set_level(level l);
level current_level();
bool parse_level(const std::string& text, level& out);
void write(level l, const std::string& line);

template <class... Args>
void emit(level l, Args&&... args) {
  if (l < current_level()) return;
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  write(l, os.str());
}

template <class... Args> void debug(Args&&... a) { emit(level::debug, std::forward<Args>(a)...); }
template <class... Args> void info(Args&&... a) { emit(level::info, std::forward<Args>(a)...); }
template <class... Args> void warn(Args&&... a) { emit(level::warn, std::forward<Args>(a)...); }
template <class... Args> void error(Args&&... a) { emit(level::error, std::forward<Args>(a)...); }

}  // namespace dibs::log
