#include "file_mode_output.hpp"

#include <adapters/jsonl/journal_search.hpp>
#include <dibs/stores/store_uri.hpp>

#include <stdexcept>
#include <sys/stat.h>

namespace dibs::cli {

std::string find_file_mode_output(store_flags& s) {
  const auto uri = parse_store_uri(s.store);
  if (uri.kind != store_kind::jsonl) return {};
  struct stat st {};
  if (::stat(uri.path.c_str(), &st) != 0)
    throw std::invalid_argument("--store " + s.store + ": there is no file " + uri.path);
  if (!s.out.empty()) return {};
  const auto outs = jsonl::outputs_with_journal_for(uri.path);
  if (outs.size() > 1) {
    std::string all;
    for (const auto& o : outs) all += (all.empty() ? "" : ", ") + o + ".journal";
    throw std::invalid_argument("several journals belong to " + uri.path + " (" + all + "): name the run with --out OUT.jsonl");
  }
  // Counting the input alone would say every line is pending after a finished run (its OUT holds
  // the outcomes, and its journal is gone): a wrong answer with exit 0. Ask for the run instead.
  if (outs.empty())
    throw std::invalid_argument(
        "--out is needed: in file mode a run's outcomes are in its OUT file, and no journal next to " + uri.path +
        " belongs to it (an unfinished run leaves OUT.journal there; a finished run leaves only OUT), so " + uri.path +
        " alone can't tell what was done. Name the run: --store " + s.store + " --out OUT.jsonl");
  s.out = outs.front();
  return "the journal " + s.out + ".journal belongs to " + uri.path + " (found next to it; --out names another run)";
}

}  // namespace dibs::cli
