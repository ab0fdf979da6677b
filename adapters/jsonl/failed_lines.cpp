#include "failed_lines.hpp"

#include <dibs/setting_error.hpp>

#include "journal_format.hpp"
#include "json_members.hpp"

#include "engine/src/json_text.hpp"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace dibs::jsonl {

namespace od = simdjson::ondemand;

namespace {
std::string reason_of(std::string_view failure_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view reason;
  if (parser.parse(failure_json.data(), failure_json.size()).get(doc) || doc["reason"].get(reason)) return {};
  return std::string(reason);
}

// A value's JSON text as written in the line (objects and arrays whole, scalars as their token).
bool raw_value(od::value v, std::string_view& out) {
  od::json_type t{};
  if (v.type().get(t)) return false;
  if (t == od::json_type::object) {
    od::object o;
    return !v.get_object().get(o) && !o.raw_json().get(out);
  }
  if (t == od::json_type::array) {
    od::array a;
    return !v.get_array().get(a) && !a.raw_json().get(out);
  }
  out = v.raw_json_token();
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\r' || out.back() == '\n'))
    out.remove_suffix(1);
  return true;
}
}  // namespace

std::vector<line_outcome> outcomes_in_journal(std::string_view text, std::string_view header, const std::string& path,
                                              const same_content_fn& same_content) {
  const auto scan = scan_journal(text, header, path, same_content);
  std::map<std::size_t, line_outcome> by_line;
  for (const auto& e : scan.entries) {
    if (e.retry) {
      by_line.erase(e.line);
      continue;
    }
    line_outcome o;
    o.line = e.line;
    o.done = e.done;
    o.body = std::string(text.substr(e.body_offset, e.body_length));
    if (!o.done) o.reason = reason_of(o.body);
    by_line[e.line] = std::move(o);
  }
  std::vector<line_outcome> out;
  for (auto& [line, o] : by_line) out.push_back(std::move(o));
  return out;
}

std::vector<line_outcome> outcomes_in_output(std::string_view out_text, const std::vector<std::size_t>& in_lines,
                                             const std::string& target, const std::string& path) {
  std::vector<line_outcome> out;
  od::parser parser;
  std::size_t k = 0, pos = 0;
  while (pos < out_text.size()) {
    auto nl = out_text.find('\n', pos);
    if (nl == std::string_view::npos) nl = out_text.size();
    const std::string line(out_text.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (k >= in_lines.size())
      throw std::runtime_error("the output " + path + " has more lines than the input: it is not this input's output");
    const simdjson::padded_string padded(line);
    od::document doc;
    od::object obj;
    if (parser.iterate(padded).get(doc) || doc.get_object().get(obj))
      throw std::runtime_error("line " + std::to_string(k + 1) + " of the output " + path + " is not a JSON object");
    line_outcome o;
    o.line = in_lines[k++];
    std::string_view failed_raw, target_raw;
    std::string members;
    for (auto field : obj) {
      std::string_view key;
      od::value v;
      if (field.unescaped_key().get(key) || field.value().get(v)) break;
      members += (members.empty() ? "" : ", ") + std::string(key);
      if (key == own_member) {  // dibs's record of the line: {"failed":{...}} (a user's "failed" is theirs)
        od::object own;
        od::value f;
        if (!v.get_object().get(own) && !own.find_field_unordered("failed").get(f)) raw_value(f, failed_raw);
      } else if (key == target) {
        raw_value(v, target_raw);
      }
    }
    if (!failed_raw.empty()) {
      o.body = compact_json(failed_raw);
      o.reason = reason_of(o.body);
    } else if (!target_raw.empty() && target_raw != "null") {
      o.done = true;
      o.body = compact_json(target_raw);
    } else {
      // Neither: a finished run leaves no line open, so its answers went to another member. Read
      // with this target, every done line would look open, and be asked of the API again.
      throw std::invalid_argument(open_line_in_output(k, path, target, members));
    }
    out.push_back(std::move(o));
  }
  if (k != in_lines.size())
    throw std::runtime_error("the output " + path + " has fewer lines than the input: it is not this input's output");
  return out;
}

std::string open_line_in_output(std::size_t k, const std::string& path, const std::string& target, const std::string& members) {
  return "line " + std::to_string(k) + " of the output " + path + " has no answer in " + target +
         " and no failure record: the run wrote its answers to another member (the line has: " + members + "); give " +
         setting_name("target") + " as the run had it";
}

namespace {
// The non-blank lines of a text, each without its line end.
std::vector<std::string_view> nonblank_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const auto line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) lines.push_back(line);
  }
  return lines;
}
}  // namespace

std::string answers_member(std::string_view in_text, std::string_view out_text) {
  const auto in = nonblank_lines(in_text);
  const auto out = nonblank_lines(out_text);
  std::string found;
  for (std::size_t k = 0; k < in.size() && k < out.size(); ++k) {
    const auto before = top_level_members(in[k]);
    const auto after = top_level_members(out[k]);
    if (!before || !after) continue;
    std::vector<std::string> added;
    for (const auto& m : after->members)
      if (m.key != own_member && std::none_of(before->members.begin(), before->members.end(),
                                              [&](const member_span& b) { return b.key == m.key; }))
        added.push_back(m.key);
    if (added.size() != 1) continue;  // a failed line (nothing added), or not a line dibs wrote
    if (!found.empty() && found != added.front()) return {};
    found = added.front();
  }
  return found;
}

bool says_no_data(std::string_view answer) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view status;
  return !parser.parse(answer.data(), answer.size()).get(doc) && !doc["status"].get(status) && status == "fail";
}

bool reason_selected(const std::string& reason, const std::string& contains, const std::optional<std::string>& is) {
  if (is && reason != *is) return false;
  return contains.empty() || reason.find(contains) != std::string::npos;
}

std::string journal_text(const std::string& header, const std::vector<line_outcome>& outcomes) {
  std::string text = header + "\n";
  for (const auto& o : outcomes) {
    if (o.done) {
      text += done_record(o.line, o.body);
    } else {
      text += "{\"line\":" + std::to_string(o.line) + ",\"failed\":" + o.body + "}\n";
    }
  }
  return text;
}

std::vector<failure_reason> top_reasons(const std::vector<std::pair<std::string, std::string>>& failures,
                                        std::size_t top) {
  std::map<std::string, failure_reason> by_reason;
  for (const auto& [id, reason] : failures) {
    auto& r = by_reason[reason];
    r.reason = reason;
    ++r.count;
    if (r.example_ids.empty()) r.example_ids.push_back(id);
    else if (r.example_ids.size() == 1) r.example_ids.push_back(id);
    else r.example_ids[1] = id;
  }
  std::vector<failure_reason> out;
  for (auto& [reason, r] : by_reason) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace dibs::jsonl
