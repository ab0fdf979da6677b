// A SQL test database as its server's own dump tool writes it (everything_in_database()).
#pragma once

#include "support/process.hpp"

#include <regex>
#include <stdexcept>
#include <string>

namespace dibs::test {

inline std::string dump_output(const std::vector<std::string>& argv) {
  child_process p(argv, false);
  std::string out;
  if (p.finish(out) != 0) throw std::runtime_error(argv[0] + " failed");
  return out;
}

// "mysql://root@127.0.0.1:3306,127.0.0.2:3307/dibs_test?x" -> its first host's dump.
inline std::string mariadb_dump(const std::string& uri) {
  std::smatch m;
  static const std::regex form(R"(^mysql://([^@/]+)@([^:/,]+):(\d+)[^/]*/([^?]+))");
  if (!std::regex_search(uri, m, form)) throw std::runtime_error("mariadb_dump: an odd URI " + uri);
  return dump_output({"mariadb-dump", "--no-defaults", "--skip-comments", "--protocol=tcp", "-h", m[2], "-P", m[3],
                      "-u", m[1], m[4]});
}

inline std::string postgres_dump(const std::string& uri) { return dump_output({"pg_dump", "--no-owner", "-d", uri}); }

}  // namespace dibs::test
