// File mode's text, for any bytes:
// - the output line: with_member either refuses the bytes (not one JSON object) or returns one
//   valid JSON object that holds the target with the given value;
// - the journal: the bytes as an API's answer, compacted, never hold a newline (a record is one
//   line); when they are JSON, the record is one the journal's reader accepts, and its body
//   means exactly what the answer meant.
#include <adapters/jsonl/journal_format.hpp>
#include <adapters/jsonl/json_members.hpp>
#include "engine/src/json_text.hpp"

#include <simdjson.h>

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::dom::parser dom, again;
  const std::string line(reinterpret_cast<const char*>(data), size);
  const auto out = dibs::jsonl::with_member(line, "location", "{\"c\":1}");
  if (!out.empty()) {
    simdjson::dom::element doc;
    if (dom.parse(out).get(doc) || !doc.is_object()) std::abort();
    std::int64_t c = 0;
    if (doc["location"]["c"].get_int64().get(c) || c != 1) std::abort();
    // Removing a member leaves one valid object without it.
    const auto less = dibs::jsonl::without_member(out, "location");
    if (less.empty() || dom.parse(less).get(doc) || !doc.is_object() || !doc["location"].error()) std::abort();
  }

  const auto compact = dibs::compact_json(line);
  if (compact.find('\n') != std::string::npos || compact.find('\r') != std::string::npos) std::abort();
  simdjson::dom::element original, compacted;
  if (dom.parse(line).get(original)) return 0;  // not JSON: the store refuses it (record_problem)
  const auto record = dibs::jsonl::done_record(7, compact);
  if (!dibs::jsonl::record_problem(record.substr(0, record.size() - 1)).empty()) std::abort();
  const std::string header = dibs::jsonl::journal_header(1, 2);
  const std::string journal = header + "\n" + record;
  const auto scan = dibs::jsonl::scan_journal(journal, header, "fuzz");
  if (scan.entries.size() != 1 || scan.entries[0].line != 7 || !scan.entries[0].done || scan.torn_length != 0) std::abort();
  if (journal.substr(scan.entries[0].body_offset, scan.entries[0].body_length) != compact) std::abort();
  if (again.parse(compact).get(compacted)) std::abort();
  if (simdjson::minify(original) != simdjson::minify(compacted)) std::abort();
  return 0;
}
