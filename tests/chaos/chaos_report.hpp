// The end of a run: the summary lines `make chaos` prints, and the same figures as a JSON file
// (--report FILE), which tests/chaos/chaos_report.py turns into bench/results/chaos-latest.md.
#pragma once

#include "chaos_common.hpp"

#include <string>

namespace dibs::chaos {

void print_summary(const settings& s, const tally& t);
void write_json_report(const std::string& path, const settings& s, const tally& t);

}  // namespace dibs::chaos
