#include "budget_period.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace dibs::http {

std::optional<budget_limit> parse_budget(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0) return std::nullopt;
  const auto number = text.substr(0, slash), unit = text.substr(slash + 1);
  char* end = nullptr;
  const auto n = std::strtoull(number.c_str(), &end, 10);
  if (*end != '\0' || number.front() == '-' || n == 0 || n > 1'000'000'000'000ULL) return std::nullopt;
  if (unit == "day" || unit == "d") return budget_limit{n, budget_span::day};
  if (unit == "month" || unit == "mo") return budget_limit{n, budget_span::month};
  return std::nullopt;
}

namespace {
std::tm utc(std::chrono::system_clock::time_point t) {
  const auto s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&s, &tm);
  return tm;
}
}  // namespace

std::string period_name(budget_span span, std::chrono::system_clock::time_point now) {
  if (span == budget_span::run) return "run";
  const auto tm = utc(now);
  char buf[32];
  if (span == budget_span::day) std::snprintf(buf, sizeof buf, "day %04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  else std::snprintf(buf, sizeof buf, "month %04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
  return buf;
}

std::chrono::system_clock::time_point renews_at(budget_span span, std::chrono::system_clock::time_point now) {
  if (span == budget_span::run) return {};
  auto tm = utc(now);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  if (span == budget_span::day) {
    ++tm.tm_mday;
  } else {
    tm.tm_mday = 1;
    ++tm.tm_mon;
  }
  return std::chrono::system_clock::from_time_t(::timegm(&tm));  // timegm normalises the 32nd, month 13
}

std::string utc_text(std::chrono::system_clock::time_point t) {
  const auto tm = utc(t);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d UTC", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
  return buf;
}

}  // namespace dibs::http
