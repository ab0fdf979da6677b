#include "answer_mapping.hpp"

#include "engine/src/json_text.hpp"

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
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const auto part = text.substr(start, comma - start);
    start = comma + 1;
    if (part.empty()) continue;
    const auto eq = part.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument(setting + " '" + part + "': expected NAME=/POINTER, like country=/country");
    const auto name = part.substr(0, eq);
    const bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
                       std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!plain || name.size() > 64)
      throw std::invalid_argument(setting + " '" + part + "': a field's name is letters, digits and '_' (at most 64)");
    if (std::any_of(into.entries.begin(), into.entries.end(), [&](const answer_map::entry& e) { return e.name == name; }))
      throw std::invalid_argument(setting + ": '" + name + "' is mapped twice");
    std::string why;
    auto p = json_pointer::parse(part.substr(eq + 1), &why);
    if (!p) throw std::invalid_argument(setting + " '" + part + "': " + why);
    into.entries.push_back({name, std::move(*p)});
  }
}

std::string mapped_object(const answer_map& map, simdjson::dom::element answer) {
  std::string out = "{";
  for (std::size_t i = 0; i < map.entries.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, map.entries[i].name);
    out += ':';
    const auto v = evaluate(map.entries[i].at, answer);
    out += v ? json_text(*v) : std::string("null");
  }
  return out + "}";
}

}  // namespace dibs::http
