#include "json_check.hpp"

#include <algorithm>

namespace dibs::http {

namespace {
using namespace simdjson;

// The keys of the objects being walked, innermost last (views into the parser's own buffer,
// valid for the document): one vector per thread, reused, so a check allocates nothing in the
// steady state.
using key_stack = std::vector<std::string_view>;

// A key given twice in the object whose keys are keys[from..]: the first one found, or none.
// Parsers disagree on which copy counts (simdjson and libbson take the first, MySQL and most
// JSON libraries the last), so an answer with one could be read one way here and another way
// where it is stored: it is refused.
std::optional<std::string_view> twice(key_stack& keys, std::size_t from) {
  const auto first = keys.begin() + static_cast<std::ptrdiff_t>(from);
  std::sort(first, keys.end());
  const auto dup = std::adjacent_find(first, keys.end());
  std::optional<std::string_view> found;
  if (dup != keys.end()) found = *dup;
  keys.resize(from);
  return found;
}

std::string twice_error(std::string_view key) {
  constexpr std::size_t shown = 40;
  return "the JSON has the key \"" + std::string(key.substr(0, shown)) + (key.size() > shown ? "..." : "") +
         "\" twice in one object (parsers disagree on which one counts)";
}

// Walks every value so that the lazy on-demand parser validates all of it; a key given twice in
// one object sets `dup` (and stops the walk).
error_code walk(ondemand::value v, std::size_t depth, std::size_t max_depth, key_stack& keys,
                std::optional<std::string>& dup) {
  if (depth > max_depth) return DEPTH_ERROR;
  ondemand::json_type type;
  if (auto e = v.type().get(type)) return e;
  switch (type) {
    case ondemand::json_type::object: {
      ondemand::object obj;
      if (auto e = v.get_object().get(obj)) return e;
      const auto mark = keys.size();
      for (auto field : obj) {
        std::string_view key;
        if (auto e = field.unescaped_key().get(key)) return e;
        keys.push_back(key);
        ondemand::value child;
        if (auto e = field.value().get(child)) return e;
        if (auto e = walk(child, depth + 1, max_depth, keys, dup)) return e;
        if (dup) return SUCCESS;
      }
      if (auto k = twice(keys, mark)) dup = twice_error(*k);
      return SUCCESS;
    }
    case ondemand::json_type::array: {
      ondemand::array arr;
      if (auto e = v.get_array().get(arr)) return e;
      for (auto element : arr) {
        ondemand::value child;
        if (auto e = element.get(child)) return e;
        if (auto e = walk(child, depth + 1, max_depth, keys, dup)) return e;
        if (dup) return SUCCESS;
      }
      return SUCCESS;
    }
    case ondemand::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case ondemand::json_type::number: {
      ondemand::number n;
      return v.get_number().get(n);
    }
    case ondemand::json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    case ondemand::json_type::null: {
      bool is_null = false;
      if (auto e = v.is_null().get(is_null)) return e;
      return is_null ? SUCCESS : INCORRECT_TYPE;
    }
  }
  return TAPE_ERROR;
}
}  // namespace

std::optional<std::string_view> json_check_result::member(std::string_view name) const {
  for (const auto& [key, value] : captured)
    if (key == name) return value;
  return std::nullopt;
}

json_check_result check_json_object(ondemand::parser& parser, std::string& body, std::size_t max_depth,
                                    const std::vector<std::string>& capture) {
  json_check_result r;
  const std::size_t size = body.size();
  if (body.capacity() < size + SIMDJSON_PADDING) body.reserve(size + SIMDJSON_PADDING);
  padded_string_view input(body.data(), size, body.capacity());

  ondemand::document doc;
  if (auto e = parser.iterate(input).get(doc)) {
    r.error = std::string("invalid JSON: ") + error_message(e);
    return r;
  }
  ondemand::json_type type;
  if (auto e = doc.type().get(type)) {
    r.error = std::string("invalid JSON: ") + error_message(e);
    return r;
  }
  if (type != ondemand::json_type::object) {
    r.error = "the body is JSON but not an object";
    return r;
  }
  ondemand::object obj;
  if (auto e = doc.get_object().get(obj)) {
    r.error = std::string("invalid JSON: ") + error_message(e);
    return r;
  }
  thread_local key_stack keys;
  keys.clear();
  std::optional<std::string> dup;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) {
      r.error = std::string("invalid JSON: ") + error_message(e);
      return r;
    }
    keys.push_back(key);
    ondemand::value v;
    if (auto e = field.value().get(v)) {
      r.error = std::string("invalid JSON: ") + error_message(e);
      return r;
    }
    if (std::find(capture.begin(), capture.end(), key) != capture.end()) {
      ondemand::json_type t;
      if (!v.type().get(t) && t == ondemand::json_type::string) {
        std::string_view s;
        if (auto e = v.get_string().get(s)) {
          r.error = std::string("invalid JSON: ") + error_message(e);
          return r;
        }
        r.captured.emplace_back(key, s);
        continue;
      }
    }
    if (auto e = walk(v, 1, max_depth, keys, dup)) {
      r.error = e == DEPTH_ERROR ? "JSON nested deeper than " + std::to_string(max_depth) + " levels"
                                 : std::string("invalid JSON: ") + error_message(e);
      return r;
    }
    if (dup) {
      r.error = std::move(*dup);
      return r;
    }
  }
  if (auto k = twice(keys, 0)) {
    r.error = twice_error(*k);
    return r;
  }
  const char* trailing = nullptr;
  if (doc.current_location().get(trailing) == SUCCESS) {  // OUT_OF_BOUNDS means nothing is left
    r.error = "invalid JSON: content after the object";
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace dibs::http
