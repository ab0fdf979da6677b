#include "answer_mapping.hpp"

#include "llm_answer.hpp"

#include "engine/src/json_text.hpp"

#include <dibs/field_mapping.hpp>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace dibs::http {

std::vector<std::string> answer_map::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

void parse_answer_map(const std::string& text, const std::string& setting, answer_map& into) {
  for (auto& part : split_mapping(text, setting)) {
    const auto& name = part.name;
    const auto shown = name + "=" + part.pointer;
    const bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
                       std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!plain || name.size() > 64)
      throw std::invalid_argument(setting + " '" + shown + "': a field's name is letters, digits and '_' (at most 64)");
    if (std::any_of(into.entries.begin(), into.entries.end(), [&](const answer_map::entry& e) { return e.name == name; }))
      throw std::invalid_argument(setting + ": '" + name + "' is mapped twice");
    std::string why;
    auto p = json_pointer::parse(part.pointer, &why);
    if (!p) throw std::invalid_argument(setting + " '" + shown + "': " + why);
    into.entries.push_back({name, std::move(*p), std::move(part.column_type)});
  }
}

std::string mapped_object(const answer_map& map, simdjson::dom::element answer) {
  std::string out = "{";
  for (std::size_t i = 0; i < map.entries.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, map.entries[i].name);
    out += ':';
    // A pointer may go on into a string that holds JSON (an LLM's content): its member's value.
    out += value_through_strings(map.entries[i].at, answer).value_or("null");
  }
  return out + "}";
}

}  // namespace dibs::http
