// `dibs status` and `dibs retry` in file mode: the input must exist, and without --out the run's
// journal is looked for next to the input (adapters/jsonl/journal_search.hpp has the rule).
#pragma once

#include "store_flags.hpp"

#include <string>

namespace dibs::cli {

// Nothing for a store that is not a file. Otherwise throws std::invalid_argument naming the
// file when IN is missing, or when several journals belong to it, or naming --out when none does
// (a finished run's journal is gone: IN alone would count every line pending); sets `s.out` from
// the one journal that names IN. Returns a note for the user ("" when --out was given).
std::string find_file_mode_output(store_flags& s);
// The refusal of `--store jsonl:PATH` (`store`) whose file is not there, with the file of its
// directory probably meant ("did you mean 'jsonl:customers.jsonl'?").
std::string no_input_file(const std::string& store, const std::string& path);

}  // namespace dibs::cli
