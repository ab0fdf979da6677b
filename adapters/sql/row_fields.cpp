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

namespace {
bool one_of(const std::string& t, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return t == n; });
}

// RFC 8259's number: -? int frac? exp?
bool json_number(std::string_view s) {
  std::size_t i = 0;
  const auto digits = [&] {
    const auto from = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i - from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size()) return false;
  if (s[i] == '0') ++i;
  else if (digits() == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

job_field as_string(const std::string& name, std::string value) {
  job_field f;
  f.name = name;
  f.st = job_field::state::string;
  f.value = std::move(value);
  return f;
}

job_field as_json(const std::string& name, const char* type_name, std::string json) {
  job_field f;
  f.name = name;
  f.st = job_field::state::not_string;
  f.type_name = type_name;
  f.json = std::move(json);
  return f;
}
}  // namespace

cell_kind cell_kind_of(const std::string& data_type) {
  std::string t;
  for (char c : data_type) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // (PostgreSQL's character(n), bpchar, is wrapped: its text loses the padding json keeps; MySQL's
  // YEAR too: '0000' is no JSON number.)
  if (one_of(t, {"varchar", "char", "text", "tinytext", "mediumtext", "enum", "set", "name", "uuid", "citext",
                 "character varying"}))
    return cell_kind::text;
  if (one_of(t, {"int", "integer", "bigint", "smallint", "tinyint", "mediumint", "decimal", "numeric", "float", "double",
                 "real", "int2", "int4", "int8", "float4", "float8", "oid"}))
    return cell_kind::number;
  if (t == "bool" || t == "boolean") return cell_kind::boolean;
  if (t == "json" || t == "jsonb") return cell_kind::json;
  return cell_kind::wrapped;
}

job_field field_of_cell(const std::string& name, std::optional<std::string> cell, cell_kind kind) {
  if (!cell) {
    job_field f;
    f.name = name;
    return f;  // NULL: missing
  }
  auto& v = *cell;
  switch (kind) {
    case cell_kind::text: return as_string(name, std::move(v));
    case cell_kind::number: {
      if (json_number(v)) return as_json(name, "a number", std::move(v));
      // MySQL's ZEROFILL writes 007: the number 7, as JSON_OBJECT made it.
      const auto digits = v.find_first_not_of('-');
      const auto first = digits == std::string::npos ? digits : v.find_first_not_of('0', digits);
      if (digits != std::string::npos && (first == std::string::npos || first > digits)) {
        const bool all_zeros = first == std::string::npos;
        auto trimmed = v.substr(0, digits) +
                       (all_zeros ? std::string("0") : v.substr(std::isdigit(static_cast<unsigned char>(v[first])) ? first : first - 1));
        if (json_number(trimmed)) return as_json(name, "a number", std::move(trimmed));
      }
      return as_string(name, std::move(v));  // NaN, Infinity: no JSON number
    }
    case cell_kind::boolean:
      if (v == "t" || v == "true" || v == "1") return as_json(name, "a boolean", "true");
      if (v == "f" || v == "false" || v == "0") return as_json(name, "a boolean", "false");
      return as_string(name, v);
    case cell_kind::json: {
      std::size_t at = 0;
      while (at < v.size() && std::isspace(static_cast<unsigned char>(v[at]))) ++at;
      const char first = at < v.size() ? v[at] : '\0';
      if (first == '{' || first == '[') {
        if (at > 0) v.erase(0, at);
        return as_json(name, first == '{' ? "an object" : "an array", std::move(v));
      }
      break;  // a scalar (a string to unescape, a number, null): read as the server wraps one
    }
    case cell_kind::wrapped: break;
  }
  // {"v": value} (wrapped), or a JSON scalar put in such an object to be read as one.
  const auto wrapped = kind == cell_kind::wrapped ? v : "{\"v\":" + v + "}";
  auto fields = fields_of_row(wrapped, {"v"});
  fields.front().name = name;
  return std::move(fields.front());
}

job with_typed_cells(job j, std::vector<std::optional<std::string>>& row, std::size_t first, const typed_read& read) {
  j.fields.reserve(j.fields.size() + read.columns.size());
  for (std::size_t i = 0; i < read.columns.size(); ++i) {
    std::optional<std::string> cell;
    if (first + i < row.size()) cell = std::move(row[first + i]);
    auto f = field_of_cell(read.columns[i], std::move(cell), i < read.kinds.size() ? read.kinds[i] : cell_kind::wrapped);
    if (i == 0 && read.source_first && !j.fields.empty()) j.fields.front() = std::move(f);
    else j.fields.push_back(std::move(f));
  }
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
