// Opening the files file mode writes (the journal, OUT.tmp) so that a file planted in their
// place can't redirect the writes: a symbolic link is refused, never followed (a link at
// OUT.tmp once made dibs overwrite the file it pointed to), anything but a regular file is
// refused, and a file dibs creates is private (0600) -- it holds the API's answers.
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

namespace dibs::jsonl {

// open(2) with O_NOFOLLOW and O_CLOEXEC added, mode 0600 for a new file; `what` names the file
// in errors ("the journal"), `setting` the one that chose it ("choose another " + its name). Throws
// std::runtime_error naming `path`: a symbolic link, not a regular file, or the system's error.
// Returns the descriptor.
int open_private(const std::string& path, int flags, const std::string& what, const std::string& setting = "out");

// Writes all of `data` at `offset` (pwrite, retried on EINTR and short writes); false with
// errno set when the system refuses.
bool write_all_at(int fd, std::string_view data, off_t offset);

// Whether something is at `path`: a symbolic link counts, dangling or not (lstat).
bool exists_here(const std::string& path);

// The mode a new file gets from this process's umask (0666 & ~umask), read without changing it.
mode_t new_file_mode();

}  // namespace dibs::jsonl
