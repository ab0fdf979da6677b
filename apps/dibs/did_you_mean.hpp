// "Did you mean ...?": the known name closest to what the user typed, for usage errors
// (a misspelled subcommand or flag). Pure; tested in tests/unit/test_did_you_mean.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::cli {

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, if it is close enough to be what was meant: at most one edit
// for names up to four letters, two up to eight, three beyond. A candidate that starts with what
// was typed (an abbreviation, `--conc` for `--concurrency`) also counts. Ties go to the first.
std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace dibs::cli
