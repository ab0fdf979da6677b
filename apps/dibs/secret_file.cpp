#include "secret_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace dibs::cli {

std::string read_secret_file(const std::string& path, const std::string& flag) {
  const std::string named = flag + " '" + path + "'";
  // O_NONBLOCK: a FIFO put there must not hang the start; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw std::invalid_argument(named + ": cannot be read (" + std::strerror(errno) + ")");
  struct stat st {};
  std::string text;
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && (st.st_mode & 077) == 0) {
    char buf[4096];
    // The first line is all that counts: a secret is short, so at most 64 KiB are read.
    while (text.size() < 64 * 1024 && text.find('\n') == std::string::npos) {
      const auto n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  if (!regular) throw std::invalid_argument(named + " is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::invalid_argument(named + " can be read or written by other users (mode " + mode +
                                "): it holds a secret; chmod 600 '" + path + "'");
  }
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  if (text.empty()) throw std::invalid_argument(named + ": its first line is empty");
  return text;
}

std::optional<std::string> secret_from_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

}  // namespace dibs::cli
