#include "journal_format.hpp"

#include "engine/src/json_text.hpp"

#include <simdjson.h>

#include <charconv>
#include <stdexcept>

namespace dibs::jsonl {

std::string journal_header(std::uint64_t input_size, std::int64_t input_mtime_ns, const std::string& target,
                           const std::string& sha256) {
  return "{\"dibs_journal\":1,\"input_size\":" + std::to_string(input_size) + ",\"input_mtime_ns\":" + std::to_string(input_mtime_ns) +
         (sha256.empty() ? "" : ",\"input_sha256\":" + json_string(sha256)) +
         (target.empty() ? "" : ",\"target\":" + json_string(target)) + "}";
}

namespace {
// A header's input_size and input_mtime_ns (nullopt: no header of this journal's).
std::optional<std::pair<std::uint64_t, std::int64_t>> size_and_time(std::string_view header_line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::uint64_t size = 0, version = 0;
  std::int64_t time = 0;
  if (parser.parse(header_line.data(), header_line.size()).get(doc) || doc["dibs_journal"].get(version) || version != 1 ||
      doc["input_size"].get(size) || doc["input_mtime_ns"].get(time))
    return std::nullopt;
  return std::pair(size, time);
}
}  // namespace

bool same_input(std::string_view header_line, std::string_view input_header) {
  const auto recorded = size_and_time(header_line);
  return recorded && recorded == size_and_time(input_header);
}

std::optional<recorded_input> header_input(std::string_view header_line) {
  const auto recorded = size_and_time(header_line);
  if (!recorded) return std::nullopt;
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view sha;
  recorded_input r{recorded->first, {}};
  if (!parser.parse(header_line.data(), header_line.size()).get(doc) && !doc["input_sha256"].get(sha)) r.sha256 = std::string(sha);
  return r;
}

std::optional<std::string> header_target(std::string_view header_line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view target;
  if (parser.parse(header_line.data(), header_line.size()).get(doc) || doc["target"].get(target)) return std::nullopt;
  return std::string(target);
}

std::string done_record(std::size_t line, std::string_view compact_answer) {
  std::string out = "{\"line\":" + std::to_string(line) + ",\"result\":";
  out += compact_answer;
  out += "}\n";
  return out;
}

std::string failed_record(std::size_t line, std::string_view reason, int http_status, int attempts) {
  return "{\"line\":" + std::to_string(line) + ",\"failed\":{\"reason\":" + json_string(reason) +
         ",\"httpStatus\":" + std::to_string(http_status) + ",\"attempts\":" + std::to_string(attempts) + "}}\n";
}

std::string retry_record(std::size_t line) { return "{\"line\":" + std::to_string(line) + ",\"retry\":true}\n"; }

namespace {
// A record is `{"line":N,"result":...}` or `{"line":N,"failed":{...}}`, exactly as written
// above: its body is found by position, so the reader insists on that shape.
bool parse_record(std::string_view record, journal_entry& e) {
  static constexpr std::string_view start = "{\"line\":";
  if (record.substr(0, start.size()) != start || record.empty() || record.back() != '}') return false;
  std::size_t n = 0;
  const char* digits = record.data() + start.size();
  const char* end = record.data() + record.size();
  auto [p, ec] = std::from_chars(digits, end, n);
  if (ec != std::errc{} || n == 0 || *digits == '0') return false;
  const std::string_view rest(p, static_cast<std::size_t>(end - p));
  static constexpr std::string_view result = ",\"result\":", failed = ",\"failed\":", retry = ",\"retry\":true}";
  if (rest == retry) {
    e.line = n;
    e.retry = true;
    e.body_offset = static_cast<std::size_t>(p - record.data());
    e.body_length = 0;
    return true;
  }
  if (rest.substr(0, result.size()) == result)
    e.done = true;
  else if (rest.substr(0, failed.size()) == failed)
    e.done = false;
  else
    return false;
  e.line = n;
  e.body_offset = static_cast<std::size_t>(p - record.data()) + (e.done ? result.size() : failed.size());
  e.body_length = record.size() - e.body_offset - 1;
  if (record.find('\n') != std::string_view::npos) return false;
  // And it is JSON, all of it (the body is copied into the output as it is).
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(record.data(), record.size()).get(doc)) return false;
  if (!e.done) {
    simdjson::dom::object failure;
    std::string_view reason;
    if (doc["failed"].get(failure) || failure["reason"].get(reason)) return false;
  }
  return true;
}
}  // namespace

std::string record_problem(std::string_view record) {
  journal_entry e;
  if (parse_record(record, e)) return {};
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const auto err = parser.parse(record.data(), record.size()).get(doc);
  if (err) return std::string("not valid JSON: ") + simdjson::error_message(err);
  return "not a journal record";
}

journal_scan scan_journal(std::string_view text, std::string_view expected_header, const std::string& path,
                          const same_content_fn& same_content) {
  journal_scan scan;
  std::size_t pos = 0;
  bool header = true;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    const bool last = nl == std::string_view::npos || nl + 1 == text.size();
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    journal_entry e;
    const bool whole = nl != std::string_view::npos;
    if (header) {
      if (whole && !same_input(line, expected_header)) {
        // Another size or time: the same input still, when its first bytes are the ones recorded.
        const auto recorded = header_input(line);
        const bool same = recorded && !recorded->sha256.empty() && same_content && same_content(*recorded);
        if (!same)
          throw std::runtime_error(
              "the journal " + path + " belongs to another version of the input (its header " + json_string(line.substr(0, 200)) +
              " vs " + std::string(expected_header) + "; " +
              (recorded && !recorded->sha256.empty() ? "the input is no longer the " + std::to_string(recorded->size) + " bytes it recorded"
                                                     : "an earlier dibs's journal, which records no content to compare") +
              "): remove it to start over (its finished lines are then asked again)");
      }
      if (!whole) break;  // a header that was never finished: the journal starts over
      scan.target = header_target(line);
      header = false;
    } else if (!whole || !parse_record(line, e)) {
      if (!last) throw std::runtime_error("the journal " + path + " is damaged at byte " + std::to_string(pos) + ": remove it to start over (its finished lines are then done again)");
      scan.torn_offset = pos;
      scan.torn_length = text.size() - pos;
      static constexpr std::string_view start = "{\"line\":";
      if (line.substr(0, start.size()) == start) {
        std::size_t n = 0;
        auto [p, ec] = std::from_chars(line.data() + start.size(), line.data() + line.size(), n);
        if (ec == std::errc{} && p < line.data() + line.size() && *p == ',') scan.torn_line = n;
      }
      break;
    } else {
      e.body_offset += pos;
      scan.entries.push_back(e);
    }
    pos = nl + 1;
    scan.valid_end = pos;
  }
  return scan;
}

}  // namespace dibs::jsonl
