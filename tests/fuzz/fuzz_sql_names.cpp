// The MySQL URI parser and the SQL builders: any URI either parses or is refused with a reason
// that never shows the password; any names either pass check_names or are refused, and the SQL
// built from accepted names quotes every identifier (an even number of backticks).
#include <adapters/mysql/mysql_uri.hpp>
#include <adapters/mysql/mysql_protocol.hpp>

#include "engine/src/uri_redact.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    const auto u = dibs::mysql::parse_mysql_uri(input);
    if (u.port == 0) std::abort();
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    if (why.empty()) std::abort();
    // The password must never be echoed: what runs from "user:" to the LAST '@' (as the parser
    // and the redactor read it), or, with no '@', what follows the ':' of "user:password/db"
    // (which reads as a port that is no number). Checked only when its text appears once in
    // the URI; a short one (it may be a word of the message) only in the URI the message shows.
    if (input.rfind("mysql://", 0) == 0) {
      const std::size_t start = 8;
      const auto at = input.rfind('@');
      const auto colon = input.find(':', start);
      std::string password;
      bool with_at = false;
      if (at != std::string::npos && at >= start) {
        if (colon != std::string::npos && colon < at) password = input.substr(colon + 1, at - colon - 1), with_at = true;
      } else {
        const auto authority = input.substr(start, input.find_first_of("/?", start) - start);
        const auto c = authority.find(':');
        const auto port = c == std::string::npos ? "" : authority.substr(c + 1);
        if (!port.empty() && port.find(',') == std::string::npos &&
            port.find_first_not_of("0123456789") != std::string::npos)
          password = port;
      }
      const bool once = !password.empty() && password.find('*') == std::string::npos &&
                        input.find(password) == input.rfind(password);
      if (once && password.size() >= 4 && why.find(password) != std::string::npos) std::abort();
      if (once && with_at && dibs::redact_uri(input).find(password) != std::string::npos) std::abort();
    }
  }

  dibs::mysql::table_names n;
  const auto a = input.find('\n'), b = a == std::string::npos ? a : input.find('\n', a + 1);
  n.table = input.substr(0, a);
  n.source = a == std::string::npos ? "s" : input.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  n.target = b == std::string::npos ? "t" : input.substr(b + 1);
  try {
    dibs::mysql::check_names(n);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  for (const auto& sql : {dibs::mysql::create_table(n), dibs::mysql::stats(n), dibs::mysql::complete_rows(n, {"1", "2"}, {"'{}'", "'[]'"})})
    if (std::count(sql.begin(), sql.end(), '`') % 2 != 0) std::abort();
  return 0;
}
