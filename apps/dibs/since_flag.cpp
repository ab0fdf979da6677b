#include "since_flag.hpp"

#include "duration_flag.hpp"

#include "engine/src/utc_time.hpp"

#include <cctype>
#include <ctime>
#include <stdexcept>

namespace dibs::cli {

namespace {
bool digits(const std::string& s, std::size_t at, std::size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}
}  // namespace

std::optional<store_time> parse_rfc3339(const std::string& s) {
  int y, mo, d, h, mi, sec;
  if (!digits(s, 0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, 11, 2, h) || s[13] != ':' ||
      !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, sec))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::size_t at = 19;
  long long micros = 0;
  if (at < s.size() && s[at] == '.') {
    std::size_t n = 0;
    long long scale = 100'000;
    for (++at; at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])); ++at, ++n) {
      micros += (s[at] - '0') * scale;
      scale /= 10;
    }
    if (n == 0) return std::nullopt;
  }
  long offset_s = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    int oh, om;
    if (!digits(s, at + 1, 2, oh) || at + 3 >= s.size() || s[at + 3] != ':' || !digits(s, at + 4, 2, om) || oh > 23 ||
        om > 59)
      return std::nullopt;
    offset_s = (s[at] == '-' ? -1 : 1) * (oh * 3600L + om * 60L);
    at += 6;
  } else {
    return std::nullopt;  // RFC 3339 names the offset: a bare local time would be a guess
  }
  if (at != s.size()) return std::nullopt;
  const std::time_t utc = utc_seconds(y, mo, d, h, mi, sec) - offset_s;
  return store_time{} + std::chrono::seconds(utc) + std::chrono::microseconds(micros);
}

void since_flag(const std::string& flag, const std::string& text, retry_filter& which) {
  if (const auto ago = parse_duration(text)) {
    which.since_ago = *ago;
    return;
  }
  if (const auto at = parse_rfc3339(text)) {
    which.since = *at;
    return;
  }
  throw std::invalid_argument(flag + ": '" + text +
                              "' is neither a duration ago (like 30m, 2h) nor an RFC 3339 time (like 2026-11-23T17:00:00Z)");
}

}  // namespace dibs::cli
