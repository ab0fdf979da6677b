// jsonl_store's samples for the pre-flight: open lines, read without claiming them.
#include <dibs/stores/jsonl_store.hpp>

#include "input_line.hpp"
#include "json_members.hpp"

#include <simdjson.h>

#include <algorithm>
#include <fstream>

namespace dibs::jsonl {

std::optional<pending_sample> jsonl_store::sample_done() {
  if (!first_done_line_) return std::nullopt;
  std::ifstream in(opts_.in, std::ios::binary);
  std::string line;
  for (std::size_t k = 1; k <= first_done_line_ && std::getline(in, line); ++k) {
  }
  simdjson::dom::parser parser;
  std::vector<more_field> more;
  for (const auto& name : opts_.more_fields) more.push_back({name, json_pointer_of(name)});
  auto read = read_input_line(parser, line, first_done_line_, json_pointer_of(opts_.source), more);
  if (read.what != input_line::kind::item) return std::nullopt;
  pending_sample s;
  s.id = name_of_line(first_done_line_);
  s.source = std::move(read.source);
  s.source.name = opts_.source;
  s.more = std::move(read.more);
  s.fields = member_names(line);
  return s;
}

std::vector<pending_sample> jsonl_store::sample_pending_items(std::size_t n) {
  std::vector<memory_store::item> usable, odd;
  {
    std::lock_guard op(op_mutex_);
    // Lines whose source is a string first: one odd line must not refuse a template that fits the rest.
    for (std::size_t i = 1; i <= line_of_.size() && usable.size() < n; ++i) {
      auto it = mem_.get(std::to_string(i));
      if (!it || it->failed || it->writes > 0) continue;
      (it->source.st == job_field::state::string ? usable : odd).push_back(*it);
    }
  }
  for (std::size_t i = 0; usable.size() < n && i < odd.size(); ++i) usable.push_back(odd[i]);
  std::vector<pending_sample> out;
  std::vector<std::size_t> lines;
  for (const auto& open : usable) {
    pending_sample s;
    s.id = line_id(open.id);
    s.source = open.source;
    s.source.name = opts_.source;
    s.more = open.more;
    out.push_back(std::move(s));
    lines.push_back(line_of_[std::stoul(open.id) - 1]);
  }
  // Only the source is kept in memory: the lines' other names come from the file, in one pass.
  const std::size_t last = lines.empty() ? 0 : *std::max_element(lines.begin(), lines.end());
  std::ifstream in(opts_.in, std::ios::binary);
  std::string line;
  for (std::size_t k = 1; k <= last && std::getline(in, line); ++k)
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == k) out[i].fields = member_names(line);
  return out;
}

}  // namespace dibs::jsonl
