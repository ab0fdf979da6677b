// The journal as a file: opened without following a symbolic link, private (0600), locked
// (one run at a time), and appended to so that it only ever holds whole records. An append is
// written and synced before it counts; when the system refuses (a full disk, an I/O error, the
// file size limit), the journal is cut back to where it was and the caller is told, so no torn
// record stays behind to make the next start refuse the journal.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace dibs::jsonl {

class journal_file {
 public:
  // `read_only` (`dibs status`): no lock, nothing created; a missing journal is simply absent.
  // Throws std::runtime_error naming the path: a symbolic link, locked by another run, ...
  journal_file(std::string path, bool read_only);
  ~journal_file();
  journal_file(const journal_file&) = delete;
  journal_file& operator=(const journal_file&) = delete;

  bool exists() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // The whole journal as it is now ("" when absent).
  std::string read_all() const;
  // A new journal: `header` alone; or an existing one kept up to `valid_end` (a torn last
  // record cut off), appended to from there.
  void start_new(const std::string& header);
  void keep_until(std::uint64_t valid_end);
  // Appends `records` (whole lines) and syncs them. On failure the journal is cut back and
  // std::runtime_error says so: "cannot write the journal PATH: REASON; N outcome(s) wait in
  // memory and will be written when it can be" (N = `outcomes`).
  void append(const std::string& records, std::size_t outcomes);
  // Removes the journal from its directory, if the file there is still this one (a run that
  // ended, or was refused, holding no outcome: it leaves no file behind). Its lock goes with it.
  void remove_if_ours();

 private:
  void write_at_end(const std::string& text, const std::string& after_reason);

  std::string path_;
  int fd_ = -1;
  std::uint64_t end_ = 0;     // where the last whole record ends
  bool cut_pending_ = false;  // a failed append could not be cut back yet
  std::mutex mutex_;
};

}  // namespace dibs::jsonl
