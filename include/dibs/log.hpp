// Leveled logging to stderr, one line per call, safe from any thread: `dibs warn: text`, or with
// set_json(true) one JSON object per line: {"ts":"2026-11-22T06:12:03.123Z","level":"warn",
// "msg":"..."}; events about one item also carry "item", "event" and "reason".
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
void set_json(bool on);
bool json();
// An event about one item (failed, lease lost, result rejected): `item ID: EVENT: REASON`.
void item(level l, const std::string& id, const std::string& event, const std::string& reason);
// A live status line under the log on a terminal (the CLI's progress line). While one is shown,
// every log line first erases it and draws it again below itself, so the two are never glued
// together on one line. Both take the same lock as the log lines.
void show_status(const std::string& line);  // draws `line` in place of the last one (\r, erase)
void end_status(bool keep);                 // no status line any more: the last one kept (newline) or erased
// The JSON line for a message (and, for an item event, its fields), without the newline.
std::string json_line(level l, const std::string& msg, const std::string* id = nullptr,
                      const std::string* event = nullptr, const std::string* reason = nullptr);

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
