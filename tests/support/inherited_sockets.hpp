// Which sockets of this process a child started with exec would inherit (tests only).
// A socket that leaks into a child outlives its close() here: the peer never sees the
// connection end, so a database keeps that session's transaction, and its row locks, open for
// as long as the child lives.
#pragma once

#include <fcntl.h>

#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace dibs::test {

// (fd, "socket:[inode]") of every socket this process holds now.
inline std::set<std::pair<int, std::string>> open_sockets() {
  std::set<std::pair<int, std::string>> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code lec;
    const auto target = std::filesystem::read_symlink(e.path(), lec).string();
    if (lec || target.rfind("socket:", 0) != 0) continue;
    out.emplace(std::stoi(e.path().filename().string()), target);
  }
  return out;
}

// The sockets opened since `before` that lack FD_CLOEXEC, as "fd socket:[inode]".
inline std::vector<std::string> inheritable_sockets_since(const std::set<std::pair<int, std::string>>& before) {
  std::vector<std::string> out;
  for (const auto& s : open_sockets()) {
    if (before.count(s)) continue;
    const int flags = ::fcntl(s.first, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) out.push_back(std::to_string(s.first) + " " + s.second);
  }
  return out;
}

}  // namespace dibs::test
