#include <dibs/log.hpp>
#include "log_escape.hpp"
#include "json_text.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace dibs::log {

namespace {
std::atomic<level> g_level{level::warn};
std::atomic<bool> g_json{false};
std::mutex g_mutex;
std::string g_status;  // the status line on screen ("" = none); under g_mutex
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

void set_json(bool on) { g_json = on; }

std::string escape_controls(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      const auto c1 = static_cast<unsigned char>(text[++i]);  // a C1 control (0x9b is CSI)
      out += "\\u00";
      out += hex[c1 >> 4];
      out += hex[c1 & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
bool json() { return g_json; }

namespace {
std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const auto t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];  // room for any int in each field (g++ checks the worst case)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

void emit_line(const std::string& line) {
  std::lock_guard lock(g_mutex);
  if (g_status.empty()) {
    std::fprintf(stderr, "%s\n", line.c_str());
  } else {
    std::fprintf(stderr, "\r\033[K%s\n%s", line.c_str(), g_status.c_str());
    std::fflush(stderr);
  }
}
}  // namespace

void show_status(const std::string& line) {
  std::lock_guard lock(g_mutex);
  g_status = line;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void end_status(bool keep) {
  std::lock_guard lock(g_mutex);
  if (g_status.empty()) return;
  std::fprintf(stderr, keep ? "\n" : "\r\033[K");
  std::fflush(stderr);
  g_status.clear();
}

std::string json_line(level l, const std::string& msg, const std::string* id, const std::string* event,
                      const std::string* reason) {
  std::string out = "{\"ts\":\"" + utc_now() + "\",\"level\":\"" + name(l) + "\",\"msg\":";
  append_json_string(out, msg);
  if (id) {
    out += ",\"item\":";
    append_json_string(out, *id);
  }
  if (event) {
    out += ",\"event\":";
    append_json_string(out, *event);
  }
  if (reason) {
    out += ",\"reason\":";
    append_json_string(out, *reason);
  }
  return out + "}";
}

void write(level l, const std::string& line) {
  emit_line(g_json ? json_line(l, line) : "dibs " + std::string(name(l)) + ": " + escape_controls(line));
}

void item(level l, const std::string& id, const std::string& event, const std::string& reason) {
  if (l < current_level()) return;
  const std::string text = "item " + id + ": " + event + ": " + reason;
  emit_line(g_json ? json_line(l, text, &id, &event, &reason) : "dibs " + std::string(name(l)) + ": " + escape_controls(text));
}

}  // namespace dibs::log
