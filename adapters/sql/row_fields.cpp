#include "row_fields.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>

namespace dibs::sql_common {

namespace od = simdjson::ondemand;

namespace {
const char* type_name(od::json_type t) {
  switch (t) {
    case od::json_type::object: return "an object";
    case od::json_type::array: return "an array";
    case od::json_type::number: return "a number";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
    default: return "a string";
  }
}

// One member's value as a field: its JSON text as the server wrote it, byte for byte.
job_field field_of(std::string_view name, od::value v) {
  job_field f;
  f.name = std::string(name);
  od::json_type t{};
  if (v.type().get(t) || t == od::json_type::null) return f;  // missing
  if (t == od::json_type::string) {
    std::string_view s;
    if (v.get_string().get(s)) {
      f.st = job_field::state::not_string;
      f.type_name = "an invalid string";
      return f;
    }
    f.st = job_field::state::string;
    f.value = std::string(s);
    return f;
  }
  f.st = job_field::state::not_string;
  f.type_name = type_name(t);
  std::string_view raw;
  od::object o;
  od::array a;
  bool got = true;
  if (t == od::json_type::object) got = !v.get_object().get(o) && !o.raw_json().get(raw);
  else if (t == od::json_type::array) got = !v.get_array().get(a) && !a.raw_json().get(raw);
  else raw = v.raw_json_token();
  if (got) {
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.remove_suffix(1);
    f.json = std::string(raw);
  }
  return f;
}
}  // namespace

std::vector<job_field> fields_of_row(std::string_view object_json, const std::vector<std::string>& names) {
  std::vector<job_field> out;
  out.reserve(names.size());
  for (const auto& n : names) {
    job_field f;
    f.name = n;
    out.push_back(std::move(f));
  }
  if (names.empty()) return out;
  thread_local od::parser parser;
  const simdjson::padded_string padded(object_json);
  od::document doc;
  od::object obj;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(obj)) return out;
  for (auto member : obj) {
    std::string_view key;
    od::value v;
    if (member.unescaped_key().get(key) || member.value().get(v)) break;
    const auto it = std::find(names.begin(), names.end(), key);
    if (it == names.end()) continue;
    out[static_cast<std::size_t>(it - names.begin())] = field_of(key, v);
  }
  return out;
}

job with_typed_columns(job j, std::string_view object_json, const typed_read& read) {
  if (read.columns.empty()) return j;
  auto fields = fields_of_row(object_json, read.columns);
  std::size_t from = 0;
  if (read.source_first && !fields.empty() && !j.fields.empty()) {
    j.fields.front() = std::move(fields.front());
    from = 1;
  }
  for (std::size_t i = from; i < fields.size(); ++i) j.fields.push_back(std::move(fields[i]));
  return j;
}

bool json_column_type(const std::string& data_type) {
  return data_type == "json" || data_type == "jsonb" || data_type == "longtext";
}

std::string unreadable_column_type(const std::string& data_type) {
  std::string t;
  for (char c : data_type) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* binary : {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "bytea", "bit", "varbit", "bit varying"})
    if (t == binary)
      return "a " + data_type + " column: its bytes are no text a request can carry (a view or a generated column can "
             "encode them, as hex or base64)";
  return {};
}

}  // namespace dibs::sql_common
