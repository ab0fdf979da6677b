// Files for the CLI's tests: a fresh directory of the test's own (under the temporary directory,
// named after the process so parallel runs don't meet), and a file's whole content.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dibs::test {

inline std::filesystem::path scratch_dir(const std::string& prefix, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace dibs::test
