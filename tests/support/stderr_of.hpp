// What the calls in `fn` wrote to this process's stderr (the log), for tests that check a
// warning was given: stderr goes to a temporary file meanwhile.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dibs::test {

template <class F>
std::string stderr_of(F fn) {
  namespace fs = std::filesystem;
  const auto path = fs::temp_directory_path() / ("dibs-log-" + std::to_string(::getpid()) + ".txt");
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
  fn();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  fs::remove(path);
  return s.str();
}

}  // namespace dibs::test
