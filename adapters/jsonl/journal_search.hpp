// File mode without out (`dibs status`, `dibs retry`): the run's journal is found next to its
// input. A journal's header names the input it belongs to (its size and modification time), so
// the rule is: the files `*.journal` in IN's directory whose header names IN; the run's OUT is
// such a journal's path without `.journal`.
#pragma once

#include <string>
#include <vector>

namespace dibs::jsonl {

// The OUT paths of the journals in IN's directory whose header names IN (sorted); none when IN
// can't be read.
std::vector<std::string> outputs_with_journal_for(const std::string& in);

}  // namespace dibs::jsonl
