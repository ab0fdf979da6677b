// The seconds since the epoch of a calendar time in UTC (timegm), its fields as people write them
// (month 1-12). Shared by `since`'s RFC 3339 times (apps/dibs/since_flag) and MySQL's
// DATETIME(6) values (adapters/mysql/claimed_rows). Internal.
#pragma once

#include <ctime>

namespace dibs {

inline std::time_t utc_seconds(int year, int month, int day, int hour, int minute, int second) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return ::timegm(&tm);
}

}  // namespace dibs
