// The journal's text, as pure functions (tested and fuzzed without files).
//
// A journal is a header line, then one record per outcome that landed, each ONE line of
// compact JSON ending in a newline:
//   {"dibs_journal":1,"input_size":123,"input_mtime_ns":456,"input_sha256":"9f86...","target":"geo"}
//   {"line":7,"result":<the API's answer, whitespace between tokens removed>}
//   {"line":9,"failed":{"reason":"...","httpStatus":404,"attempts":1}}
//   {"line":9,"retry":true}      (`dibs retry`: the line's failure is void, the line open again)
// An answer is re-written on one line because APIs pretty-print: a newline inside a record
// would split it in two, and the journal could not be read back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::jsonl {

// The header for an input of that size and modification time; with `target`, the member the run
// writes its answers to, so that `dibs status`, `retry` and `release` read it from the journal
// (a journal of an earlier dibs has none); with `sha256`, the input's content's (input_digest.hpp),
// so that the journal goes on with the same content under another time.
std::string journal_header(std::uint64_t input_size, std::int64_t input_mtime_ns, const std::string& target = "",
                           const std::string& sha256 = "");
// Whether `header_line` is a header for the input `input_header` (journal_header without a
// target) names (its size and time), whatever else it records; and the target it records, if any.
bool same_input(std::string_view header_line, std::string_view input_header);
std::optional<std::string> header_target(std::string_view header_line);
// The input a header was made for: its size, and its content's SHA-256 ("" in an earlier dibs's).
struct recorded_input {
  std::uint64_t size = 0;
  std::string sha256;
};
std::optional<recorded_input> header_input(std::string_view header_line);
// The record lines (with their newline); `compact_answer` is dibs::compact_json of a JSON value (dibs/json_text.hpp).
std::string done_record(std::size_t line, std::string_view compact_answer);
std::string failed_record(std::size_t line, std::string_view reason, int http_status, int attempts);
std::string retry_record(std::size_t line);
// Empty when `record` (without its newline) is a record this journal's reader accepts;
// otherwise why not. The writer checks each record with it, so it never writes what it can't read.
std::string record_problem(std::string_view record);

struct journal_entry {
  std::size_t line = 0;
  bool done = false;           // a result; otherwise a failure (or, with `retry`, neither)
  bool retry = false;          // a retry record: whatever the line had before is void
  std::size_t body_offset = 0;  // the result, or the failure's object, in the journal's text
  std::size_t body_length = 0;
};

struct journal_scan {
  std::vector<journal_entry> entries;  // in the order written (a line may appear again: the last wins)
  std::size_t valid_end = 0;           // where the last whole record ends (0: not even a header)
  std::optional<std::string> target;   // the target its header records (none in an earlier dibs's journal)
  // A torn last record (a write that did not finish): where it starts and how long it is, and
  // its line when the part that was written says so (0 otherwise).
  std::size_t torn_offset = 0, torn_length = 0, torn_line = 0;
};

// Whether the input is the bytes a header recorded (input_prefix_sha256 and its size).
using same_content_fn = std::function<bool(const recorded_input&)>;
// Reads a journal's text. Throws std::runtime_error (naming `path`) when the header is not one
// for `expected_header`'s input (same_input: a journal of another input) and `same_content` does
// not find the input the bytes it recorded (a touched input is the same), or a record before the
// last is damaged; a torn LAST record is reported in the result instead, to be cut off.
journal_scan scan_journal(std::string_view text, std::string_view expected_header, const std::string& path,
                          const same_content_fn& same_content = {});

}  // namespace dibs::jsonl
