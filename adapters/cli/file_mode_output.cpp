#include "file_mode_output.hpp"

#include <adapters/jsonl/journal_search.hpp>
#include <adapters/stores/store_uri.hpp>

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
  if (outs.empty())
    return "no journal next to " + uri.path + " belongs to it: the input alone is counted "
           "(a finished run's counts: --out OUT.jsonl)";
  s.out = outs.front();
  return "the journal " + s.out + ".journal belongs to " + uri.path + " (found next to it; --out names another run)";
}

}  // namespace dibs::cli
