// mysql://user:password@host:port/database?table=jobs&socket=/path  (percent-encoded user and
// password; port 3306 by default).
#pragma once

#include <cstdint>
#include <string>

namespace dibs::sql {

struct mysql_uri {
  std::string user;
  std::string password;
  std::string host = "127.0.0.1";
  std::uint16_t port = 3306;
  std::string database;
  std::string table = "jobs";
  std::string socket;
};

// Throws std::invalid_argument naming what is wrong; never echoes the password.
mysql_uri parse_mysql_uri(const std::string& text);

}  // namespace dibs::sql
