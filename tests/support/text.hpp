// Small text helpers the tests share: a program's output as lines, a statement without spaces.
#pragma once

#include <algorithm>
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

}  // namespace dibs::test
