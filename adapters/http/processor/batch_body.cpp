#include <dibs/http/batch_body.hpp>

#include <simdjson.h>

#include <stdexcept>
#include <vector>

namespace dibs::http {

namespace {
// Whether `text` at `at` opens a field placeholder ({name} or {name?}; not {env:...}/{file:...}).
bool field_at(const std::string& text, std::size_t at) {
  if (text[at] != '{' || at + 1 >= text.size()) return false;
  std::size_t i = at + 1;
  const auto first = text[i];
  if (!(std::isalnum(static_cast<unsigned char>(first)) || first == '_')) return false;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '.' || text[i] == '-')) ++i;
  if (i < text.size() && text[i] == '?') ++i;
  return i < text.size() && text[i] == '}';
}

bool secret_at(const std::string& text, std::size_t at) {
  return text.compare(at, 5, "{env:") == 0 || text.compare(at, 6, "{file:") == 0;
}
}  // namespace

batch_body batch_body::parse(const std::string& text, const std::string& setting) {
  auto refuse = [&](const std::string& why) { return std::invalid_argument(setting + " '" + text + "': " + why); };
  // Where each array opens and closes, outside JSON strings; and where the fields stand.
  std::vector<std::size_t> open;
  std::size_t outer_open = std::string::npos, outer_close = std::string::npos;
  std::size_t first_field = std::string::npos, last_field = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' && secret_at(text, i)) throw refuse("a secret stands outside a header or the URL (give the key as a header)");
    if (c == '{' && field_at(text, i)) {
      if (first_field == std::string::npos) {
        first_field = i;
        if (open.empty()) throw refuse("the field " + text.substr(i, text.find('}', i) - i + 1) + " stands in no array: "
                                       "the array that holds the item's fields is written once per item");
        outer_open = open.front();
      }
      last_field = i;
      i = text.find('}', i);
      continue;
    }
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[') open.push_back(i);
    else if (c == ']' && !open.empty()) {
      if (open.size() == 1 && open.front() == outer_open) outer_close = i;
      open.pop_back();
    }
  }
  if (first_field == std::string::npos) throw refuse("no {field} to write once per item (as in \"input\": [{text}])");
  if (outer_close == std::string::npos || last_field > outer_close)
    throw refuse("every {field} must stand in the one array that is written once per item");
  batch_body b;
  b.head_ = text.substr(0, outer_open + 1);
  b.tail_ = text.substr(outer_close);
  const auto element = text.substr(outer_open + 1, outer_close - outer_open - 1);
  // The whole must be JSON with any elements, and the array one element: a second one
  // ([{text}, "x"]) would be repeated with it.
  simdjson::dom::parser p;
  simdjson::dom::element whole;
  const auto filled = b.head_ + "null" + b.tail_;
  if (p.parse(filled).get(whole)) throw refuse("it is not JSON once its fields are filled");
  std::string probe = "[" + element + "]";
  for (std::size_t i = 0; i < probe.size(); ++i)  // fields as null: the element alone, as an array
    if (probe[i] == '{' && field_at(probe, i)) probe.replace(i, probe.find('}', i) - i + 1, "null");
  simdjson::dom::array one;
  if (p.parse(probe).get_array().get(one)) throw refuse("it is not JSON once its fields are filled");
  if (one.size() != 1) throw refuse("the array written once per item holds more than its one element");
  b.element_ = field_template::parse(element, field_template::format::json, setting);
  return b;
}

std::string batch_body::join(const std::vector<std::string_view>& elements) const {
  std::size_t bytes = head_.size() + tail_.size() + elements.size();
  for (const auto& e : elements) bytes += e.size();
  std::string out;
  out.reserve(bytes);
  out += head_;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    out += elements[i];
  }
  out += tail_;
  return out;
}

}  // namespace dibs::http
