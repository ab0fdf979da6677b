#include "claimed_rows.hpp"

#include <adapters/sql/row_fields.hpp>

#include "engine/src/server_number.hpp"
#include "engine/src/utc_time.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace dibs::mysql {

store_time parse_datetime(const char* s) {
  if (!s) return {};
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0, frac = 0;
  char fracbuf[8] = {};
  if (std::sscanf(s, "%d-%d-%d %d:%d:%d.%6s", &year, &mon, &day, &hour, &min, &sec, fracbuf) < 6) return {};
  std::string f(fracbuf);
  while (f.size() < 6) f += '0';
  frac = std::atoi(f.c_str());
  const auto t = utc_seconds(year, mon, day, hour, min, sec);
  return store_clock::from_time_t(t) + std::chrono::microseconds(frac);
}

job claimed_job(sql_row r, const std::string& by, std::uint64_t token, const std::string& source,
                const sql_common::typed_read& more) {
  job j;
  j.id = std::move(r[0]).value_or("");
  j.by = by;
  j.token = token;
  j.attempts = server_number<int>(r[2], "MySQL/MariaDB");
  j.until = parse_datetime(r[3] ? r[3]->c_str() : nullptr);
  job_field f;
  f.name = source;
  if (r[1]) {
    f.st = job_field::state::string;
    f.value = std::move(*r[1]);
  } else {
    f.st = job_field::state::missing;
  }
  j.fields.push_back(std::move(f));
  return with_typed_cells(std::move(j), r, 4, more);
}

bool has_column(const std::vector<std::string>& columns, const std::string& name) {
  return std::any_of(columns.begin(), columns.end(), [&](const std::string& c) {
    return c.size() == name.size() &&
           std::equal(c.begin(), c.end(), name.begin(), [](unsigned char a, unsigned char b) { return std::tolower(a) == std::tolower(b); });
  });
}

}  // namespace dibs::mysql
