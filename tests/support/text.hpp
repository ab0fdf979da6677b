// Small text helpers the tests share: a program's output as lines, a statement without spaces.
#pragma once

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace dibs::test {

// `text` split at '\n' (the last line kept without its end).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `s` without its spaces: statements and JSON compared whatever their layout.
inline std::string compact(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

// The number `pattern`'s first group captures in `out` (a figure of a run's summary); -1 when none.
inline long figure(const std::string& out, const char* pattern) {
  std::smatch m;
  return std::regex_search(out, m, std::regex(pattern)) ? std::stol(m[1]) : -1;
}

}  // namespace dibs::test
