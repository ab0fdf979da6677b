// File mode's failed lines, read from the journal or from a finished OUT, and put back for
// `dibs retry`: plain functions over text (tested without files), used by jsonl_store.
//
// While a run is unfinished, OUT.journal holds every outcome; `dibs retry` appends a retry record
// per line it puts back ({"line":9,"retry":true}: the line's failure is void). After a finished
// run the journal is gone and OUT holds the outcomes: `dibs retry` then writes a new journal from
// OUT (every done line's answer, every failure it does not put back), and the next
// `dibs enrich` with the same out does the open lines and rewrites OUT.
#pragma once

#include <dibs/admin_store.hpp>
#include "journal_format.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dibs::jsonl {

struct line_outcome {
  std::size_t line = 0;  // in IN, 1-based
  bool done = false;
  std::string body;      // done: the answer (compact JSON); failed: the failure's object
  std::string reason;    // failed: its reason
};

// The outcomes a journal holds now (the last record of a line wins; a retry record voids it), by line.
std::vector<line_outcome> outcomes_in_journal(std::string_view text, std::string_view header, const std::string& path,
                                              const same_content_fn& same_content = {});
// The outcomes a finished OUT holds: its k-th line is IN's k-th non-blank line, `in_lines[k]`.
// Throws std::runtime_error naming `path` when OUT does not fit IN.
std::vector<line_outcome> outcomes_in_output(std::string_view out_text, const std::vector<std::size_t>& in_lines,
                                             const std::string& target, const std::string& path);
// The refusal of a finished OUT read with a target its `k`-th line (1-based; `members`: its
// members, listed) has no value in, and no failure record: every line of a finished run has one
// or the other, so the target is not the run's.
std::string open_line_in_output(std::size_t k, const std::string& path, const std::string& target, const std::string& members);
// The member a finished run wrote its answers to, told by OUT against its input: a done line of
// OUT is its input line with one member more (dibs's own record aside). Empty when no line tells
// (none done) or two lines tell different members. A finished run leaves no journal, so this is
// how a later `dibs failed` or `dibs retry` without the run's target finds it.
std::string answers_member(std::string_view in_text, std::string_view out_text);
// Whether a done line's answer is the API's "no data" (a top-level "status" of "fail": ip-api's
// profile, as admin_store::no_data_count counts them).
bool says_no_data(std::string_view answer);
// Whether `reason` is one `dibs retry reason TEXT` puts back ("" = every one).
bool reason_selected(const std::string& reason, const std::string& contains,
                     const std::optional<std::string>& is = std::nullopt);
// A journal's text for `outcomes`: the header, then a record per outcome.
std::string journal_text(const std::string& header, const std::vector<line_outcome>& outcomes);
// The `top` most frequent reasons of (id, reason) pairs, most frequent first (ties by reason),
// each with its first and last id.
std::vector<failure_reason> top_reasons(const std::vector<std::pair<std::string, std::string>>& failures, std::size_t top);

}  // namespace dibs::jsonl
