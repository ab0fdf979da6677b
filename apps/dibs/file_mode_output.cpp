#include "file_mode_output.hpp"

#include <adapters/jsonl/journal_search.hpp>
#include <dibs/stores/store_uri.hpp>

#include "did_you_mean.hpp"

#include <algorithm>
#include <dirent.h>
#include <stdexcept>
#include <sys/stat.h>
#include <vector>

namespace dibs::cli {

std::string no_input_file(const std::string& store, const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string prefix = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::vector<std::string> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') files.emplace_back(e->d_name);
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  const auto near = nearest_name(path.substr(prefix.size()), files);
  return "--store " + store + ": there is no file " + path +
         (near ? "; did you mean 'jsonl:" + prefix + *near + "'?" : std::string());
}

std::string find_file_mode_output(store_flags& s) {
  const auto uri = parse_store_uri(s.store);
  if (uri.kind != store_kind::jsonl) return {};
  struct stat st {};
  if (::stat(uri.path.c_str(), &st) != 0) throw std::invalid_argument(no_input_file(s.store, uri.path));
  if (!s.out.empty()) return {};
  const auto outs = jsonl::outputs_with_journal_for(uri.path);
  if (outs.size() > 1) {
    std::string all;
    for (const auto& o : outs) all += (all.empty() ? "" : ", ") + o + ".journal";
    throw std::invalid_argument("several journals belong to " + uri.path + " (" + all + "): name the run with " + s.out_flag + " OUT.jsonl");
  }
  // Counting the input alone would say every line is pending after a finished run (its OUT holds
  // the outcomes, and its journal is gone): a wrong answer with exit 0. Ask for the run instead.
  if (outs.empty())
    throw std::invalid_argument(
        s.out_flag + " is needed: in file mode a run's outcomes are in its OUT file, and no journal next to " + uri.path +
        " belongs to it (an unfinished run leaves OUT.journal there; a finished run leaves only OUT), so " + uri.path +
        " alone can't tell what was done. Name the run: --store " + s.store + " " + s.out_flag + " OUT.jsonl");
  s.out = outs.front();
  return "the journal " + s.out + ".journal belongs to " + uri.path + " (found next to it; " + s.out_flag + " names another run)";
}

}  // namespace dibs::cli
