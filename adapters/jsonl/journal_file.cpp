#include "journal_file.hpp"

#include "private_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dibs::jsonl {

journal_file::journal_file(std::string path, bool read_only) : path_(std::move(path)) {
  if (read_only) {
    struct stat st {};
    if (::lstat(path_.c_str(), &st) != 0 && errno == ENOENT) return;
    fd_ = open_private(path_, O_RDONLY, "the journal");
    return;
  }
  fd_ = open_private(path_, O_RDWR | O_CREAT, "the journal");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("another dibs run is using " + path_ + " (it is locked)");
  }
  // A journal an older dibs created with 0644: it holds the API's answers, so it becomes private.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && (st.st_mode & 077) != 0) ::fchmod(fd_, 0600);
}

journal_file::~journal_file() {
  if (fd_ >= 0) ::close(fd_);
}

std::string journal_file::read_all() const {
  std::string text;
  if (fd_ < 0) return text;
  char buf[1 << 16];
  for (off_t at = 0;;) {
    const auto n = ::pread(fd_, buf, sizeof buf, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("cannot read the journal " + path_ + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  return text;
}

void journal_file::remove_if_ours() {
  struct stat mine {}, there {};
  if (fd_ < 0 || ::fstat(fd_, &mine) != 0 || ::lstat(path_.c_str(), &there) != 0) return;
  if (mine.st_dev == there.st_dev && mine.st_ino == there.st_ino) ::unlink(path_.c_str());
}

void journal_file::start_new(const std::string& header) {
  std::lock_guard lock(mutex_);
  end_ = 0;
  cut_pending_ = true;  // whatever is there (a header that was never finished) goes
  write_at_end(header + "\n", "");
}

void journal_file::keep_until(std::uint64_t valid_end) {
  std::lock_guard lock(mutex_);
  end_ = valid_end;
  if (::ftruncate(fd_, static_cast<off_t>(end_)) != 0 || ::fdatasync(fd_) != 0)
    throw std::runtime_error("cannot cut the torn record off the journal " + path_ + ": " + std::strerror(errno));
}

void journal_file::append(const std::string& records, std::size_t outcomes) {
  std::lock_guard lock(mutex_);
  write_at_end(records, "; " + std::to_string(outcomes) + " outcome(s) wait in memory and will be written when it can be");
}

void journal_file::write_at_end(const std::string& text, const std::string& after_reason) {
  auto fail = [&](int err) {
    // Cut back to the last whole record, so that no torn record stays; if even that fails,
    // the next append tries again before it writes.
    cut_pending_ = ::ftruncate(fd_, static_cast<off_t>(end_)) != 0;
    throw std::runtime_error("cannot write the journal " + path_ + ": " + std::strerror(err) + after_reason);
  };
  if (cut_pending_) {
    if (::ftruncate(fd_, static_cast<off_t>(end_)) != 0) fail(errno);
    cut_pending_ = false;
  }
  if (!write_all_at(fd_, text, static_cast<off_t>(end_))) fail(errno);
  if (::fdatasync(fd_) != 0) fail(errno);
  end_ += text.size();
}

}  // namespace dibs::jsonl
