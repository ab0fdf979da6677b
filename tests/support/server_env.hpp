// Where the database tests find their server: the URI in an environment variable, or the one the
// ctest fixture that started the server wrote to a file; and names no other test uses.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dibs::test {

// `variable`'s value, else the first line of `file`.
inline std::string server_uri(const char* variable, const char* file) {
  if (const char* uri = std::getenv(variable); uri && *uri) return uri;
  std::ifstream in(file);
  std::string uri;
  std::getline(in, uri);
  if (uri.empty()) throw std::runtime_error(std::string("no ") + variable + " and nothing in " + file);
  return uri;
}

// A server's URI (no table named) naming `table`.
inline std::string with_table(const std::string& base, const std::string& table) {
  return base + (base.find('?') == std::string::npos ? "?table=" : "&table=") + table;
}

// A table or collection name no other test (or earlier run) uses.
inline std::string unique_name(const std::string& prefix) {
  static int counter = 0;
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

}  // namespace dibs::test
