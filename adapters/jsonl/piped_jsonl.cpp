#include "piped_jsonl.hpp"

#include <dibs/setting_error.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace dibs::jsonl {

namespace {
std::string make_private_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dibs-stdin-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::runtime_error("jsonl:-: cannot make a temporary directory in " + pattern.substr(0, pattern.rfind('/')) +
                             ": " + std::strerror(errno));
  return buf.data();
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const auto w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Copies from one descriptor to another until the end; false (errno set) when it can't.
bool copy_fd(int from, int to) {
  char buf[1 << 16];
  for (;;) {
    const auto n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (!write_all(to, buf, static_cast<std::size_t>(n))) return false;
  }
}
}  // namespace

piped_jsonl_store::piped_jsonl_store(const jsonl_options& fields) : dir_(make_private_dir()) {
  jsonl_options o = fields;
  o.in = dir_ + "/in.jsonl";
  o.out = dir_ + "/out.jsonl";
  o.read_only = false;
  {
    FILE* in = std::fopen(o.in.c_str(), "wxe");
    if (!in || !copy_fd(STDIN_FILENO, fileno(in)) || std::fclose(in) != 0) {
      const std::string why = std::strerror(errno);
      ::unlink(o.in.c_str());
      ::rmdir(dir_.c_str());
      throw std::runtime_error("jsonl:-: cannot copy stdin to " + o.in + ": " + why);
    }
  }
  try {
    inner_ = std::make_unique<jsonl_store>(o);
  } catch (...) {
    ::unlink(o.in.c_str());
    ::rmdir(dir_.c_str());
    throw;
  }
}

piped_jsonl_store::~piped_jsonl_store() {
  inner_.reset();  // its journal lock and threads first
  for (const char* name : {"/in.jsonl", "/out.jsonl", "/out.jsonl.journal", "/out.jsonl.tmp"})
    ::unlink((dir_ + name).c_str());
  ::rmdir(dir_.c_str());
}

std::string piped_jsonl_store::describe() const { return "jsonl stdin -> stdout"; }

std::size_t piped_jsonl_store::seed(std::size_t, std::uint64_t) {
  throw std::invalid_argument(setting_name("store") + " jsonl:- reads its items from stdin: there is no file to seed");
}

store_stats piped_jsonl_store::stats_blocking() { return inner_->stats_blocking(); }

std::string piped_jsonl_store::finish(bool drained) {
  if (!drained)
    return "the run was cut short: nothing is written to stdout, and input from stdin can't be resumed (give files, " +
           setting_name("store") + " jsonl:IN.jsonl " + setting_name("out") + " OUT.jsonl, for a run that can)";
  const auto said = inner_->finish(true);  // writes out.jsonl in stdin's order
  const std::string out = dir_ + "/out.jsonl";
  std::fflush(stdout);
  FILE* f = std::fopen(out.c_str(), "re");
  if (!f || !copy_fd(fileno(f), STDOUT_FILENO)) {
    const std::string why = std::strerror(errno);
    if (f) std::fclose(f);
    throw std::runtime_error("jsonl:-: cannot write the output to stdout: " + why);
  }
  std::fclose(f);
  // "wrote /tmp/dibs-stdin-x/out.jsonl: N lines (...)": the temporary name is of no use to the user.
  const auto colon = said.find(": ");
  return "wrote stdout" + (colon == std::string::npos ? std::string() : said.substr(colon));
}

}  // namespace dibs::jsonl
