// The MySQL URI parser and the SQL builders: any URI either parses or is refused with a reason
// that never shows the password; any names either pass check_names or are refused, and the SQL
// built from accepted names quotes every identifier (an even number of backticks).
#include <adapters/mysql/mysql_uri.hpp>
#include <adapters/mysql/sql_protocol.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    const auto u = dibs::sql::parse_mysql_uri(input);
    if (u.port == 0) std::abort();
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    if (why.empty()) std::abort();
    // The password (between "user:" and "@") must never be echoed.
    const auto scheme = input.find("://");
    const auto at = input.find('@', scheme == std::string::npos ? 0 : scheme);
    if (input.rfind("mysql://", 0) == 0 && at != std::string::npos) {
      const auto colon = input.find(':', scheme + 3);
      if (colon != std::string::npos && colon < at && at - colon > 8) {
        const auto password = input.substr(colon + 1, at - colon - 1);
        // (Only when the password's text appears nowhere else in the URI.)
        if (input.find(password) == colon + 1 && input.find(password, colon + 2) == std::string::npos &&
            why.find(password) != std::string::npos)
          std::abort();
      }
    }
  }

  dibs::sql::table_names n;
  const auto a = input.find('\n'), b = a == std::string::npos ? a : input.find('\n', a + 1);
  n.table = input.substr(0, a);
  n.source = a == std::string::npos ? "s" : input.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  n.target = b == std::string::npos ? "t" : input.substr(b + 1);
  try {
    dibs::sql::check_names(n);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  for (const auto& sql : {dibs::sql::create_table(n), dibs::sql::stats(n), dibs::sql::complete_rows(n, {1, 2}, {"'{}'", "'[]'"})})
    if (std::count(sql.begin(), sql.end(), '`') % 2 != 0) std::abort();
  return 0;
}
