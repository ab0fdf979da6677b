#include "api_body.hpp"

#include "engine/src/json_text.hpp"

#include <simdjson.h>

#include <cctype>

namespace dibs::http {

namespace {
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with_caseless(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

std::size_t find_caseless(std::string_view s, std::string_view what, std::size_t from = 0) {
  for (std::size_t i = from; i + what.size() <= s.size(); ++i)
    if (starts_with_caseless(s.substr(i), what)) return i;
  return std::string_view::npos;
}

// Spaces squeezed to one, and at most `max` characters (UTF-8: never half a character).
std::string shortened(std::string_view s, std::size_t max) {
  std::string out;
  std::size_t chars = 0;
  bool space = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if ((c & 0xC0) != 0x80) {  // a character starts here
      if (chars + (space ? 1 : 0) >= max) return out + "...";
      if (space) {
        out += ' ';
        ++chars;
      }
      space = false;
      ++chars;
    }
    out += static_cast<char>(c);
  }
  return out;
}

std::string html_title(std::string_view page) {
  const auto open = find_caseless(page, "<title");
  if (open == std::string_view::npos) return "";
  const auto start = page.find('>', open);
  const auto end = find_caseless(page, "</title>", start == std::string_view::npos ? open : start);
  if (start == std::string_view::npos || end == std::string_view::npos) return "";
  return std::string(trimmed(page.substr(start + 1, end - start - 1)));
}

std::string html_text(std::string_view page) {
  std::string out;
  bool in_tag = false;
  for (char c : page) {
    if (c == '<') in_tag = true;
    else if (c == '>') {
      in_tag = false;
      out += ' ';
    } else if (!in_tag) out += c;
  }
  return out;
}
}  // namespace

body_kind kind_of_body(std::string_view body) {
  const auto t = trimmed(body);
  if (t.empty()) return body_kind::empty;
  if (t.front() == '<' &&
      (starts_with_caseless(t, "<!doctype html") || starts_with_caseless(t, "<html") || find_caseless(t, "<body") != std::string_view::npos ||
       find_caseless(t, "<title") != std::string_view::npos))
    return body_kind::html;
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(t.data(), t.size()).get(doc)) return t.front() == '<' ? body_kind::html : body_kind::text;
  if (doc.is_object()) return body_kind::json_object;
  if (doc.is_array()) return body_kind::json_array;
  return body_kind::json_other;
}

std::string describe_body(std::string_view body) {
  switch (kind_of_body(body)) {
    case body_kind::empty: return "an empty body";
    case body_kind::json_object: return "a JSON object";
    case body_kind::json_array: return "a JSON array";
    case body_kind::json_other: return "JSON that is not an object ('" + shortened(trimmed(body), 60) + "')";
    case body_kind::html: {
      const auto title = html_title(body);
      return title.empty() ? "an HTML page" : "an HTML page (<title>" + shortened(title, 80) + "</title>)";
    }
    case body_kind::text: return "text that is not JSON ('" + shortened(trimmed(body), 60) + "')";
  }
  return "a body";
}

std::string api_message(std::string_view body, std::size_t max_chars) {
  switch (kind_of_body(body)) {
    case body_kind::empty: return "";
    case body_kind::html: {
      const auto title = html_title(body);
      return shortened(title.empty() ? html_text(body) : title, max_chars);
    }
    case body_kind::text: return shortened(trimmed(body), max_chars);
    case body_kind::json_array:
    case body_kind::json_other: return shortened(compact_json(trimmed(body)), max_chars);
    case body_kind::json_object: break;
  }
  thread_local simdjson::dom::parser parser;
  simdjson::dom::object obj;
  const auto t = trimmed(body);
  if (parser.parse(t.data(), t.size()).get(obj)) return "";
  for (const char* key : {"message", "error", "detail", "reason", "msg", "description", "title"}) {
    simdjson::dom::element v;
    if (obj[key].get(v)) continue;
    std::string_view s;
    if (!v.get(s) && !trimmed(s).empty()) return shortened(s, max_chars);
    simdjson::dom::object inner;  // {"error": {"message": "..."}}
    if (!v.get(inner) && !inner["message"].get(s) && !trimmed(s).empty()) return shortened(s, max_chars);
  }
  return shortened(compact_json(t), max_chars);
}

std::string with_api_message(const std::string& status_line, std::string_view body) {
  const auto message = api_message(body);
  if (message.empty()) return status_line;
  // "HTTP 404 Not Found" -> "Not Found": a message that repeats it adds nothing.
  const auto third = status_line.find(' ', status_line.find(' ') + 1);
  const std::string_view phrase = third == std::string::npos ? std::string_view() : std::string_view(status_line).substr(third + 1);
  if (!phrase.empty() && find_caseless(message, phrase) != std::string_view::npos) return status_line;
  return status_line + ": " + message;
}

std::string account_spent_code(int status, std::string_view body) {
  if ((status != 402 && status != 403 && status != 429) || body.empty() || body.size() > (1u << 20)) return {};
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc)) return {};
  simdjson::dom::element error;
  if (doc["error"].get(error) || !error.is_object()) return {};
  for (const char* member : {"code", "type"}) {
    std::string_view v;
    if (error[member].get(v)) continue;
    for (const char* spent : {"insufficient_quota", "billing_hard_limit_reached", "enforced_spend_limit_reached"})
      if (v == spent) return std::string(v);
  }
  return {};
}

}  // namespace dibs::http
