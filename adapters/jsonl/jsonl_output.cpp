// File mode's end: OUT written from IN and the journal, in IN's order, atomically (OUT.tmp,
// synced, renamed), once every line is done or failed (jsonl_store.hpp).
#include <dibs/stores/jsonl_store.hpp>

#include "input_file.hpp"
#include "journal_file.hpp"
#include "journal_format.hpp"
#include "json_members.hpp"
#include "private_file.hpp"

#include "engine/src/json_text.hpp"

#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace dibs::jsonl {

std::string jsonl_store::finish(bool drained) {
  if (!journaling()) return {};
  journal_unjournaled();
  if (!drained)
    return "finished lines are kept in " + journal_->path() + "; run the same command again to do the rest";
  const auto said = write_output(journal_->read_all());
  ::unlink(journal_->path().c_str());
  return said;
}

namespace {
// OUT.tmp while it is written: removed again unless it became OUT.
class output_in_progress {
 public:
  explicit output_in_progress(std::string path) : path_(std::move(path)) {
    // A regular file here is ours: a run killed while writing it (the journal's lock says no
    // other run is at it). Anything else (a symbolic link someone planted) is refused.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(path_.c_str());
    fd_ = open_private(path_, O_WRONLY | O_CREAT | O_EXCL, "the output's temporary file");
  }
  ~output_in_progress() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(path_.c_str());
  }
  output_in_progress(const output_in_progress&) = delete;
  output_in_progress& operator=(const output_in_progress&) = delete;

  void write(std::string& buffered, bool last) {
    if (buffered.size() < (1u << 20) && !last) return;
    if (!write_all_at(fd_, buffered, written_)) fail("cannot write");
    written_ += static_cast<off_t>(buffered.size());
    buffered.clear();
  }
  // Synced, given the mode the umask gives a new file, and renamed to `out`; then the rename
  // itself is made durable, before the journal may go.
  void commit(const std::string& out) {
    if (::fsync(fd_) != 0) fail("cannot sync");
    if (::fchmod(fd_, new_file_mode()) != 0) fail("cannot set the mode of");
    if (::rename(path_.c_str(), out.c_str()) != 0) fail(("cannot rename to " + out + ":").c_str());
    renamed_ = true;
    const auto slash = out.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : out.substr(0, slash);
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  [[noreturn]] void fail(const char* what) { fail_file(std::string(what) + " the output's temporary file", path_); }
  std::string path_;
  int fd_ = -1;
  off_t written_ = 0;
  bool renamed_ = false;
};
}  // namespace

// A line as the output has it: the answer in the target (an earlier run's record of the line
// gone), or dibs's record of the failure under its own name; every other byte as the user wrote it.
std::string jsonl_store::output_line(std::size_t n, const std::string& line, bool done, std::string_view body) const {
  if (done) {
    auto merged = without_member(with_member(line, opts_.target, body), own_member);
    for (const auto& name : opts_.mapped_fields)
      if (const auto value = member_text(body, name); value && !merged.empty()) merged = with_member(merged, name, *value);
    if (!merged.empty()) return merged;
  } else {
    std::string record = "{\"failed\":";
    record += body;
    record += '}';
    auto merged = with_member(line, own_member, record);
    if (!merged.empty()) return merged;
  }
  // Not an object (only a failure can be): which line it was, and its text, under dibs's name.
  std::string out = "{";
  append_json_string(out, own_member);
  out += ":{\"line\":" + std::to_string(n) + ",\"input\":";
  append_json_string(out, line);
  out += ",\"failed\":";
  out += body;
  out += "}}";
  return out;
}

std::string jsonl_store::write_output(const std::string& journal_text) {
  struct stat in_stat {};
  if (::stat(opts_.in.c_str(), &in_stat) != 0) fail_file("cannot read the input", opts_.in);
  const auto scan = scan_journal(journal_text, header_of(in_stat), journal_->path(), same_content_of(opts_.in));
  std::vector<const journal_entry*> index;  // by line number; the last record of a line wins
  for (const auto& e : scan.entries) {
    if (index.size() <= e.line) index.resize(e.line + 1, nullptr);
    index[e.line] = e.retry ? nullptr : &e;
  }
  std::ifstream in(opts_.in, std::ios::binary);
  if (!in) fail_file("cannot read the input", opts_.in);
  output_in_progress tmp(opts_.out + ".tmp");

  std::string line, buffered;
  std::size_t written = 0, done = 0, failed = 0;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (blank(line)) continue;
    ++written;
    if (target_set(line)) {  // done before dibs came: the user's line, byte for byte
      buffered += line;
      buffered += '\n';
      tmp.write(buffered, false);
      ++done;
      continue;
    }
    if (n >= index.size() || !index[n])
      throw std::runtime_error("line " + std::to_string(n) + " of " + opts_.in + " has no outcome in the journal");
    const auto& r = *index[n];
    const std::string_view body = std::string_view(journal_text).substr(r.body_offset, r.body_length);
    buffered += output_line(n, line, r.done, body);
    buffered += '\n';
    tmp.write(buffered, false);
    ++(r.done ? done : failed);
  }
  tmp.write(buffered, true);
  tmp.commit(opts_.out);
  return "wrote " + opts_.out + ": " + std::to_string(written) + " lines (" + std::to_string(done) + " done, " +
         std::to_string(failed) + " failed), in the input's order";
}

}  // namespace dibs::jsonl
