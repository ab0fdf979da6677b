#include "json_members.hpp"

#include "engine/src/json_text.hpp"

#include <simdjson.h>

namespace dibs::jsonl {

std::string json_pointer_of(const std::string& dotted) {
  std::string out = "/";
  for (char c : dotted) {
    if (c == '.')
      out += '/';
    else if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// Just past the string whose opening quote is s[i].
std::size_t past_string(std::string_view s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') ++i;
    else if (s[i] == '"') return i + 1;
  }
  return s.size();
}

// Just past the value that starts at s[i] (the text is valid JSON: the DOM parser said so).
std::size_t past_value(std::string_view s, std::size_t i) {
  if (s[i] == '"') return past_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = past_string(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return s.size();
  }
  while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i;
}
}  // namespace

std::optional<object_layout> top_level_members(std::string_view line) {
  // The DOM parser validates all of it (a malformed value nested anywhere refuses the line, as
  // fuzzing asked) and unescapes the keys; the scan below only finds where each member is.
  thread_local simdjson::dom::parser validator;
  simdjson::dom::object object;
  if (validator.parse(line.data(), line.size()).get(object)) return std::nullopt;
  object_layout layout;
  std::size_t i = skip_space(line, 0);
  if (i >= line.size() || line[i] != '{') return std::nullopt;
  i = skip_space(line, i + 1);
  while (i < line.size() && line[i] != '}') {
    member_span m;
    m.begin = i;
    if (line[i] != '"') return std::nullopt;
    i = skip_space(line, past_string(line, i));
    if (i >= line.size() || line[i] != ':') return std::nullopt;
    m.value_begin = i = skip_space(line, i + 1);
    if (i >= line.size()) return std::nullopt;
    m.value_end = i = past_value(line, i);
    layout.members.push_back(std::move(m));
    i = skip_space(line, i);
    if (i < line.size() && line[i] == ',') i = skip_space(line, i + 1);
  }
  if (i >= line.size() || skip_space(line, i + 1) != line.size()) return std::nullopt;
  layout.close = i;
  std::size_t k = 0;
  for (auto member : object) {
    if (k >= layout.members.size()) return std::nullopt;
    layout.members[k++].key = std::string(member.key);
  }
  if (k != layout.members.size()) return std::nullopt;
  return layout;
}

std::string with_member(std::string_view line, std::string_view name, std::string_view value_json) {
  const auto layout = top_level_members(line);
  if (!layout) return {};
  std::string out;
  out.reserve(line.size() + value_json.size() + name.size() + 4);
  std::size_t copied = 0;
  for (const auto& m : layout->members) {
    if (m.key != name) continue;
    out.append(line.substr(copied, m.value_begin - copied));
    out.append(value_json);
    copied = m.value_end;
  }
  if (copied == 0) {  // none: added last, right after the last member (or inside an empty object)
    const std::size_t at = layout->members.empty() ? layout->close : layout->members.back().value_end;
    out.append(line.substr(0, at));
    if (!layout->members.empty()) out += ',';
    append_json_string(out, name);
    out += ':';
    out.append(value_json);
    copied = at;
  }
  out.append(line.substr(copied));
  return out;
}

std::string without_member(std::string_view line, std::string_view name) {
  std::string out(line);
  for (;;) {
    const auto layout = top_level_members(out);
    if (!layout) return {};
    const auto& ms = layout->members;
    std::size_t k = 0;
    while (k < ms.size() && ms[k].key != name) ++k;
    if (k == ms.size()) return out;
    // With the comma before it (after the previous value), or, when it is first, the one after it.
    if (k > 0) out.erase(ms[k - 1].value_end, ms[k].value_end - ms[k - 1].value_end);
    else if (ms.size() > 1) out.erase(ms[0].begin, ms[1].begin - ms[0].begin);
    else out.erase(ms[0].begin, ms[0].value_end - ms[0].begin);
  }
}

std::optional<std::string_view> member_text(std::string_view line, std::string_view name) {
  const auto layout = top_level_members(line);
  if (!layout) return std::nullopt;
  for (const auto& m : layout->members)
    if (m.key == name) return line.substr(m.value_begin, m.value_end - m.value_begin);
  return std::nullopt;
}

std::vector<std::string> member_names(const std::string& line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(line).get(object)) return {};
  std::vector<std::string> names;
  for (auto member : object) names.emplace_back(member.key);
  return names;
}

}  // namespace dibs::jsonl
