// Text as a SQL server reads it in a statement: between two `mark`s, a mark inside doubled. The
// mark says what the text is: a name in MySQL/MariaDB (`), a name in PostgreSQL ("), a string (').
#pragma once

#include <string>

namespace dibs::sql_common {

inline std::string quoted(const std::string& text, char mark) {
  std::string out(1, mark);
  for (const char c : text) {
    if (c == mark) out += mark;
    out += c;
  }
  return out + mark;
}

}  // namespace dibs::sql_common
