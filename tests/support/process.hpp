// Runs a command line as a child process and captures its standard output (tests only).
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace dibs::test {

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class child_process {
 public:
  explicit child_process(const std::vector<std::string>& argv) {
    std::string cmd;
    for (const auto& a : argv) cmd += shell_quote(a) + " ";
    pipe_ = ::popen(cmd.c_str(), "r");
    if (!pipe_) throw std::runtime_error("popen failed: " + cmd);
  }
  ~child_process() {
    if (pipe_) ::pclose(pipe_);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // Reads everything the child prints, waits for it, and returns its exit status.
  int finish(std::string& out) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe_)) > 0) out.append(buf, n);
    const int status = ::pclose(pipe_);
    pipe_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  FILE* pipe_ = nullptr;
};

inline std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace dibs::test
