#include <dibs/http/json_pointer.hpp>

#include "json_pointer_eval.hpp"

#include <charconv>

namespace dibs::http {

std::optional<json_pointer> json_pointer::parse(const std::string& text, std::string* why) {
  auto bad = [&](const std::string& reason) -> std::optional<json_pointer> {
    if (why) *why = reason;
    return std::nullopt;
  };
  json_pointer p;
  p.text_ = text;
  if (text.empty()) return p;
  if (text.front() != '/') return bad("a JSON Pointer starts with '/' (\"/country\", \"/loc/lat\")");
  std::string token;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      p.tokens_.push_back(std::move(token));
      token.clear();
      continue;
    }
    if (text[i] != '~') {
      token += text[i];
      continue;
    }
    if (i + 1 >= text.size() || (text[i + 1] != '0' && text[i + 1] != '1'))
      return bad("'~' must be followed by 0 ('~') or 1 ('/')");
    token += text[i + 1] == '0' ? '~' : '/';
    ++i;
  }
  return p;
}

std::optional<std::size_t> array_index(const std::string& token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0')) return std::nullopt;
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), n);
  if (ec != std::errc{} || end != token.data() + token.size()) return std::nullopt;
  return n;
}

std::optional<simdjson::dom::element> evaluate(const json_pointer& p, simdjson::dom::element doc) {
  auto at = doc;
  for (const auto& token : p.tokens()) {
    simdjson::dom::object obj;
    simdjson::dom::array arr;
    if (!at.get_object().get(obj)) {
      // A member's name compared byte for byte (RFC 6901 section 4: no Unicode normalisation).
      bool found = false;
      for (const auto member : obj)
        if (member.key == token) {
          at = member.value;
          found = true;
          break;
        }
      if (!found) return std::nullopt;
    } else if (!at.get_array().get(arr)) {
      const auto i = array_index(token);
      simdjson::dom::element next;
      if (!i || arr.at(*i).get(next)) return std::nullopt;
      at = next;
    } else {
      return std::nullopt;
    }
  }
  return at;
}

std::string json_text(simdjson::dom::element e) { return simdjson::minify(e); }

std::string plain_text(simdjson::dom::element e) {
  std::string_view s;
  if (e.is_string() && !e.get_string().get(s)) return std::string(s);
  return json_text(e);
}

}  // namespace dibs::http
