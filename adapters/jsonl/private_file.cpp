#include "private_file.hpp"

#include <dibs/setting_error.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace dibs::jsonl {

namespace {
[[noreturn]] void refuse_link(const std::string& what, const std::string& path, const std::string& setting) {
  throw std::runtime_error(what + " " + path +
                           " is a symbolic link: dibs does not follow it (it would write into the file it points to); "
                           "remove it, or choose another " + setting_name(setting));
}
}  // namespace

int open_private(const std::string& path, int flags, const std::string& what, const std::string& setting) {
  // O_NONBLOCK: a FIFO planted at the path must not hang the open; it is refused below.
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if (err == ELOOP || ((flags & O_EXCL) && err == EEXIST && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)))
      refuse_link(what, path, setting);
    throw std::runtime_error("cannot open " + what + " " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(what + " " + path + " is not a regular file: remove it, or choose another " + setting_name(setting));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

bool write_all_at(int fd, std::string_view data, off_t offset) {
  while (!data.empty()) {
    const auto n = ::pwrite(fd, data.data(), data.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
    offset += n;
  }
  return true;
}

mode_t new_file_mode() {
  // umask(2) can only be read by setting it, which races with any thread creating a file;
  // Linux shows it in /proc/self/status instead.
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(0666 & ~std::stoul(line.substr(6), nullptr, 8));
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return 0666 & ~mask;
}

bool exists_here(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace dibs::jsonl
