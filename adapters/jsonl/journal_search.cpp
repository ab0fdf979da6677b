#include "journal_search.hpp"

#include "input_file.hpp"
#include "journal_format.hpp"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>

namespace dibs::jsonl {

std::vector<std::string> outputs_with_journal_for(const std::string& in) {
  std::vector<std::string> found;
  struct stat st {};
  if (::stat(in.c_str(), &st) != 0) return found;
  const auto header = journal_header(static_cast<std::uint64_t>(st.st_size),
                                     static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec);
  const auto slash = in.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : in.substr(0, slash);
  const std::string prefix = slash == std::string::npos ? "" : in.substr(0, slash + 1);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return found;
  static const std::string suffix = ".journal";
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string path = prefix + name;
    struct stat js {};
    if (::lstat(path.c_str(), &js) != 0 || !S_ISREG(js.st_mode)) continue;  // a symbolic link is never followed
    std::ifstream f(path, std::ios::binary);
    std::string first;
    if (!f || !std::getline(f, first)) continue;
    // Its input as it was, or the same bytes under another time.
    const auto recorded = header_input(first);
    if (same_input(first, header) || (recorded && !recorded->sha256.empty() && same_content_of(in)(*recorded)))
      found.push_back(path.substr(0, path.size() - suffix.size()));
  }
  ::closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace dibs::jsonl
