#include <dibs/http/field_template.hpp>

#include "engine/src/json_text.hpp"
#include "engine/src/percent_encoding.hpp"

#include <simdjson.h>

#include <algorithm>
#include <stdexcept>

namespace dibs::http {

namespace {
bool name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}
// `{name}` or `{name?}` at `at`: the length between the braces (0 when the brace there opens no
// placeholder).
std::size_t field_name_at(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  while (i < text.size() && name_char(text[i])) ++i;
  if (i > at + 1 && i < text.size() && text[i] == '?') ++i;
  if (i == at + 1 || i >= text.size() || text[i] != '}') return 0;
  if (text[at + 1] == '.' || text[at + 1] == '-') return 0;
  return i - at - 1;
}
// A control byte a header value may not carry (a tab may stand in one: RFC 9110 5.5).
bool header_control(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

std::string kind_name(field_template::format f) {
  switch (f) {
    case field_template::format::header: return "header";
    case field_template::format::json: return "JSON body";
    case field_template::format::form: return "form body";
  }
  return "template";
}
}  // namespace

field_template field_template::parse(const std::string& text, format f, const std::string& setting,
                                      const secret_source& secrets) {
  // A header's text may hold a key written into it: never in a message.
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("bad " + setting + (f == format::header ? std::string() : " '" + text + "'") + ": " + why);
  };
  field_template t;
  t.text_ = text;
  t.format_ = f;
  bool in_string = false;  // json: inside a string literal of the template's own text
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) t.pieces_.push_back({piece::what::text, std::move(literal), {}, false});
    literal.clear();
  };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (f == format::header && header_control(static_cast<unsigned char>(c))) bad("a header value may not hold a control byte");
    if (c == '{') {
      if (const auto n = field_name_at(text, i)) {
        flush();
        std::string name = text.substr(i + 1, n);
        const bool optional = name.back() == '?';
        if (optional) name.pop_back();
        if (std::find(t.field_names_.begin(), t.field_names_.end(), name) == t.field_names_.end())
          t.field_names_.push_back(name);
        t.pieces_.push_back({piece::what::field, std::move(name), {}, in_string, optional});
        i += n + 2;
        continue;
      }
      const auto close = text.find('}', i);
      const auto colon = text.find(':', i);
      const std::string_view inner = close == std::string::npos ? std::string_view{} : std::string_view(text).substr(i + 1, close - i - 1);
      const bool secret = colon < close && (inner.substr(0, 4) == "env:" || inner.substr(0, 5) == "file:") &&
                          inner.find_first_of("{\"") == std::string_view::npos;
      if (secret) {
        const auto kind = inner.substr(0, inner.find(':'));
        const auto name = inner.substr(kind.size() + 1);
        if (name.empty()) bad("{" + std::string(kind) + ":} names nothing");
        if (!secrets) bad("{" + std::string(inner) + "}: secrets are not read here");
        flush();
        std::string value = secrets(kind, name);
        if (f == format::header && std::any_of(value.begin(), value.end(), [](char v) { return header_control(static_cast<unsigned char>(v)); }))
          bad("the secret {" + std::string(inner) + "} holds a control byte, which a header value may not");
        t.pieces_.push_back({piece::what::secret, std::move(value), "{" + std::string(inner) + "}", in_string});
        t.has_secret_ = true;
        i = close + 1;
        continue;
      }
    }
    if (f == format::json && c == '"') in_string = !in_string;
    if (f == format::json && c == '\\' && in_string && i + 1 < text.size()) {
      literal += c;
      literal += text[i + 1];
      i += 2;
      continue;
    }
    literal += c;
    ++i;
  }
  flush();
  if (f == format::json) {
    // The template with every field filled must be JSON, whatever the field brings (a number, a
    // string, an object): a typo in the braces or a missing comma stops the command here, not
    // every item at the API. A field glued to a number ("-{n}", "1{n}", "{n}.5") is JSON only
    // when the field is a number, and sent invalid when it is not: refused too.
    simdjson::dom::parser parser;
    for (const char* value : {"0", "\"x\"", "{}"}) {
      std::string sample;
      for (const auto& p : t.pieces_)
        sample += p.is == piece::what::text ? p.text : p.in_string ? std::string("x") : std::string(value);
      simdjson::dom::element doc;
      if (auto error = parser.parse(sample).get(doc))
        bad(std::string("not JSON once its {fields} are filled (") + simdjson::error_message(error) +
            "); a field stands alone as a value ({\"ip\": {ip}}) or inside a string (\"ip {ip}\")");
    }
  }
  return t;
}

void field_template::write_secret(std::string& out, const piece& p, std::string_view value) const {
  if (format_ == format::header) out += value;
  else if (format_ == format::form) out += percent_encoded(value);
  else if (!p.in_string) append_json_string(out, value);
  else {
    const auto quoted = json_string(value);
    out.append(quoted, 1, quoted.size() - 2);
  }
}

namespace {
bool is_null(const job_field& f) { return f.st == job_field::state::not_string && f.json == "null"; }
}  // namespace

bool field_template::write_value(std::string& out, const piece& p, const job_field& f, std::string& error) const {
  const std::string where = "field '" + f.name + "' (in the " + kind_name(format_) + ")";
  if (f.st == job_field::state::missing) {
    error = where + " is missing";
    return false;
  }
  // A null is no value to send: in a prompt it would read "null", and the call be paid for a
  // row with nothing to ask; in an array of inputs, the API refuses the whole request. The row
  // fails with no call, as one lacking the field does; {name?} sends it as null.
  if (is_null(f)) {
    error = where + " is null ({" + f.name + "?} sends a null)";
    return false;
  }
  if (f.st == job_field::state::not_string) {
    if (f.json.empty()) {
      error = where + " is " + f.type_name + ", which this store does not give as JSON";
      return false;
    }
    const char first = f.json.front();
    const bool structured = first == '{' || first == '[';
    if (format_ == format::json && !p.in_string) out += f.json;
    else if (structured && format_ != format::json) {
      error = where + " is " + f.type_name + ": only a string, number or boolean can stand in a " + kind_name(format_);
      return false;
    } else if (format_ == format::json) {
      const auto quoted = json_string(f.json);
      out.append(quoted, 1, quoted.size() - 2);
    } else if (format_ == format::form) {
      out += percent_encoded(f.json);
    } else {
      out += f.json;
    }
    return true;
  }
  if (format_ == format::header) {
    if (std::any_of(f.value.begin(), f.value.end(), [](char c) { return header_control(static_cast<unsigned char>(c)); })) {
      error = where + " holds a control byte (CR, LF, ...), which a header value may not carry";
      return false;
    }
    out += f.value;
  } else if (format_ == format::form) {
    out += percent_encoded(f.value);
  } else if (p.in_string) {
    const auto quoted = json_string(f.value);
    out.append(quoted, 1, quoted.size() - 2);
  } else {
    append_json_string(out, f.value);
  }
  return true;
}

field_template::expansion field_template::fill(const job& j, std::size_t max_value_bytes, bool show) const {
  expansion e;
  for (const auto& p : pieces_) {
    if (p.is == piece::what::text) {
      e.text += p.text;
      continue;
    }
    if (p.is == piece::what::secret) {
      if (show) e.text += p.spelling;
      else write_secret(e.text, p, p.text);
      continue;
    }
    const auto* f = j.field(p.text);
    job_field missing;
    missing.name = p.text;
    if (!f) f = &missing;
    if (p.optional && (f->st == job_field::state::missing || is_null(*f))) {
      // {name?}: a field the item lacks (a SQL NULL) is JSON null where a value stands, else nothing.
      if (format_ == format::json && !p.in_string) e.text += "null";
      continue;
    }
    if (max_value_bytes > 0 && f->st == job_field::state::string && f->value.size() > max_value_bytes) {
      e.error = "field '" + p.text + "' is " + std::to_string(f->value.size()) + " bytes long, more than the " +
                std::to_string(max_value_bytes) + " a value may have";
      e.text.clear();
      return e;
    }
    if (!write_value(e.text, p, *f, e.error)) {
      e.text.clear();
      return e;
    }
  }
  return e;
}

field_template::expansion field_template::expand(const job& j, std::size_t max_value_bytes) const {
  return fill(j, max_value_bytes, false);
}

field_template::expansion field_template::shown(const job& j, std::size_t max_value_bytes) const {
  return fill(j, max_value_bytes, true);
}

}  // namespace dibs::http
