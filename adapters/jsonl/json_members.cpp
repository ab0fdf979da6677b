#include "json_members.hpp"

#include <dibs/json_text.hpp>

#include <simdjson.h>

namespace dibs::jsonl {

namespace od = simdjson::ondemand;

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

std::string with_field(const std::string& line, const std::string& field, const std::string& value_json,
                       const std::string& extra) {
  // The on-demand walk below copies nested values without looking inside them; the DOM parser
  // validates all of it first (fuzzing found `[1,{"a"?2}]` copied into the output as it was).
  thread_local simdjson::dom::parser validator;
  simdjson::dom::element whole;
  if (validator.parse(line).get(whole) || !whole.is_object()) return {};
  od::parser parser;
  const simdjson::padded_string padded(line);
  od::document doc;
  od::object obj;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(obj)) return {};
  std::string out = "{";
  for (auto f : obj) {
    std::string_view key;
    od::value v;
    if (f.unescaped_key().get(key)) return {};
    const std::string key_json = json_string(key);  // the key, escaped again (the same text for plain keys)
    if (f.value().get(v)) return {};
    if (key == field || key == "failed") continue;  // replaced below
    od::json_type t;
    if (v.type().get(t)) return {};
    std::string_view raw;
    if (t == od::json_type::object) {
      od::object o;
      if (v.get_object().get(o) || o.raw_json().get(raw)) return {};
    } else if (t == od::json_type::array) {
      od::array a;
      if (v.get_array().get(a) || a.raw_json().get(raw)) return {};
    } else {
      raw = v.raw_json_token();
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' || raw.back() == '\n'))
        raw.remove_suffix(1);
    }
    if (out.size() > 1) out += ',';
    out += key_json + ":";
    out += raw;
  }
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) return {};  // something after the object
  if (out.size() > 1) out += ',';
  out += json_string(field) + ":" + value_json;
  if (!extra.empty()) out += "," + extra;
  return out + "}";
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
