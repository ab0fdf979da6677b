#include "failed_line.hpp"

#include "engine/src/json_text.hpp"

#include <simdjson.h>

#include <cctype>
#include <cstdio>
#include <ctime>

namespace dibs::cli {

std::optional<std::string> api_words_in(std::string_view reason) {
  for (auto at = reason.find("HTTP "); at != std::string_view::npos; at = reason.find("HTTP ", at + 1)) {
    const auto code = reason.substr(at + 5, 3);
    if (code.size() < 3 || !std::isdigit(static_cast<unsigned char>(code[0])) ||
        !std::isdigit(static_cast<unsigned char>(code[1])) || !std::isdigit(static_cast<unsigned char>(code[2])))
      continue;
    const auto colon = reason.find(": ", at + 8);
    if (colon == std::string_view::npos) return std::nullopt;
    const auto words = reason.substr(colon + 2);
    if (words.empty()) return std::nullopt;
    return std::string(words);
  }
  return std::nullopt;
}

std::string rfc3339_utc(store_time t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t s = static_cast<std::time_t>(us >= 0 ? us / 1'000'000 : (us - 999'999) / 1'000'000);
  // In [0, 999999] by the floor above; unsigned and bounded, so the format's width is known.
  const auto frac = static_cast<unsigned>(us - static_cast<long long>(s) * 1'000'000) % 1'000'000u;
  std::tm tm{};
  ::gmtime_r(&s, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

std::string failed_line(const failed_item& f) {
  std::string out = "{\"key\":";
  append_json_string(out, f.id);
  out += ",\"source\":";
  if (f.source) append_json_string(out, *f.source);
  else out += "null";
  out += ",\"reason\":";
  append_json_string(out, f.reason);
  out += ",\"http_status\":" + std::to_string(f.http_status);
  out += ",\"answer\":";
  if (const auto words = api_words_in(f.reason)) append_json_string(out, *words);
  else out += "null";
  out += ",\"attempts\":" + std::to_string(f.attempts);
  out += ",\"failed_at\":";
  out += f.failed_at ? "\"" + rfc3339_utc(*f.failed_at) + "\"" : std::string("null");
  out += "}";
  return out;
}

std::optional<std::string> key_of_failed_line(std::string_view line) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size()).get(doc)) return std::nullopt;
  std::string_view key;
  if (doc["key"].get(key)) return std::nullopt;
  return std::string(key);
}

}  // namespace dibs::cli
