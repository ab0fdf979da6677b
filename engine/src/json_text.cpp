#include "json_text.hpp"

#include <algorithm>

namespace dibs {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string json_string(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

std::string compact_json(std::string_view json) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(json.size());
  bool in_string = false, escaped = false;
  for (const char ch : json) {
    const auto c = static_cast<unsigned char>(ch);
    if (!in_string) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;  // JSON's whitespace
      if (c < 0x20) {  // not JSON, but never a raw control character in a record
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
        continue;
      }
      in_string = c == '"';
      out += ch;
      continue;
    }
    if (c < 0x20) {  // invalid raw inside a string: escaped (it stays one line)
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
      escaped = false;
      continue;
    }
    out += ch;
    if (escaped)
      escaped = false;
    else if (c == '\\')
      escaped = true;
    else if (c == '"')
      in_string = false;
  }
  return out;
}

void compact_json_in_place(std::string& json) {
  // Dropping whitespace only ever shortens the text, so it is done where it lies; a raw control
  // character (escaped into six bytes) sends the text to compact_json instead. Same output.
  std::size_t out = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char ch = json[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 && (in_string || !(c == '\t' || c == '\n' || c == '\r'))) {
      json.erase(out, i - out);  // the part done so far compacts to itself
      json = compact_json(json);
      return;
    }
    if (!in_string) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
      in_string = c == '"';
    } else if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in_string = false;
    }
    json[out++] = ch;
  }
  json.resize(out);
}

}  // namespace dibs
