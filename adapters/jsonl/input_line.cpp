#include "input_line.hpp"

#include "input_file.hpp"

#include <dibs/setting_error.hpp>

#include <simdjson.h>

namespace dibs::jsonl {

namespace {
const char* type_name(simdjson::dom::element_type t) {
  using et = simdjson::dom::element_type;
  switch (t) {
    case et::ARRAY: return "array";
    case et::OBJECT: return "object";
    case et::INT64:
    case et::UINT64:
    case et::DOUBLE: return "number";
    case et::BOOL: return "boolean";
    case et::NULL_VALUE: return "null";
    case et::STRING: return "string";
  }
  return "unknown";
}

// The member at `pointer` of `doc`: a string, or another type with its JSON text.
job_field member_field(const simdjson::dom::element& doc, const std::string& pointer) {
  job_field f;
  simdjson::dom::element v;
  std::string_view s;
  if (doc.at_pointer(pointer).get(v)) {
    f.st = job_field::state::missing;
  } else if (v.type() != simdjson::dom::element_type::STRING || v.get(s)) {
    f.st = job_field::state::not_string;
    f.type_name = type_name(v.type());
    f.json = simdjson::minify(v);
  } else {
    f.st = job_field::state::string;
    f.value = std::string(s);
  }
  return f;
}
}  // namespace

input_line read_input_line(simdjson::dom::parser& parser, const std::string& line, std::size_t n, const std::string& pointer,
                           const std::vector<more_field>& more) {
  input_line out;
  if (blank(line)) return out;
  simdjson::dom::element doc;
  // The DOM parser reads the whole line: a line cut short is not JSON, whatever its first bytes say.
  if (const auto err = parser.parse(line).get(doc)) {
    out.what = input_line::kind::failed;
    out.why = "line " + std::to_string(n) + " is not JSON (" + simdjson::error_message(err) + ")";
    return out;
  }
  if (doc.type() != simdjson::dom::element_type::OBJECT) {
    out.what = input_line::kind::failed;
    out.why = "line " + std::to_string(n) + " is not a JSON object (it is " + std::string(type_name(doc.type())) + ")";
    return out;
  }
  out.what = input_line::kind::item;
  out.source = member_field(doc, pointer);
  for (const auto& m : more) {
    out.more.push_back(member_field(doc, m.pointer));
    out.more.back().name = m.name;
  }
  return out;
}

std::string not_json_lines(const std::string& path, std::size_t lines, std::size_t items, const std::string& first_reason) {
  if (items > 0 || lines == 0) return "";
  return "the input " + path + " is not JSON Lines: none of its " + std::to_string(lines) + " line" + (lines == 1 ? "" : "s") +
         " is a JSON object (" + first_reason + "); " + setting_name("store") +
         " jsonl:FILE reads one JSON object a line, and nothing was sent to the API";
}

}  // namespace dibs::jsonl
