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

namespace od = simdjson::ondemand;

const char* type_name(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "array";
    case od::json_type::object: return "object";
    case od::json_type::number: return "number";
    case od::json_type::boolean: return "boolean";
    case od::json_type::null: return "null";
    case od::json_type::string: return "string";
  }
  return "unknown";
}

// The member at `pointer` of `doc`: a string, or another type with its JSON text as the line has
// it, byte for byte (a request body copies it: -1.5e3 stays -1.5e3).
job_field member_field(od::document& doc, const std::string& pointer) {
  job_field f;
  od::value v;
  od::json_type vt{};
  std::string_view s;
  if (doc.at_pointer(pointer).get(v) || v.type().get(vt)) {
    f.st = job_field::state::missing;
  } else if (vt != od::json_type::string) {
    f.st = job_field::state::not_string;
    f.type_name = type_name(vt);
    std::string_view raw;
    od::object o;
    od::array a;
    bool got = true;
    if (vt == od::json_type::object) got = !v.get_object().get(o) && !o.raw_json().get(raw);
    else if (vt == od::json_type::array) got = !v.get_array().get(a) && !a.raw_json().get(raw);
    else raw = v.raw_json_token();
    if (got) {
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' || raw.back() == '\n'))
        raw.remove_suffix(1);
      f.json = std::string(raw);
    }
  } else if (v.get_string().get(s)) {
    f.st = job_field::state::not_string;
    f.type_name = "an invalid string";
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
  // The fields are read again on demand (the line is whole JSON: the DOM parser said so), which
  // keeps a value's own text; each at_pointer restarts from the top of the document.
  thread_local od::parser fields_parser;
  const simdjson::padded_string padded(line);
  od::document fields;
  if (fields_parser.iterate(padded).get(fields)) return out;  // not after the DOM parser's yes
  out.source = member_field(fields, pointer);
  for (const auto& m : more) {
    out.more.push_back(member_field(fields, m.pointer));
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
