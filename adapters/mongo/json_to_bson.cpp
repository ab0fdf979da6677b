#include "json_to_bson.hpp"

#include <limits>

namespace dibs::mongo {

namespace {
using namespace simdjson;

struct converter {
  std::size_t max_depth;
  std::string error;

  bool fail(const std::string& why) {
    if (error.empty()) error = why;
    return false;
  }
  bool fail(error_code e) { return fail(std::string("invalid JSON: ") + error_message(e)); }

  bool append_value(bson_t* out, std::string_view key, ondemand::value v, std::size_t depth) {
    if (depth > max_depth) return fail("JSON nested deeper than " + std::to_string(max_depth) + " levels");
    const auto klen = static_cast<int>(key.size());
    ondemand::json_type type;
    if (auto e = v.type().get(type)) return fail(e);
    switch (type) {
      case ondemand::json_type::object: {
        ondemand::object obj;
        if (auto e = v.get_object().get(obj)) return fail(e);
        bson_t child;
        bson_append_document_begin(out, key.data(), klen, &child);
        const bool ok = append_object(&child, obj, depth + 1);
        bson_append_document_end(out, &child);
        return ok;
      }
      case ondemand::json_type::array: {
        ondemand::array arr;
        if (auto e = v.get_array().get(arr)) return fail(e);
        bson_t child;
        bson_append_array_begin(out, key.data(), klen, &child);
        std::uint32_t index = 0;
        bool ok = true;
        for (auto element : arr) {
          ondemand::value item;
          if (auto e = element.get(item)) {
            ok = fail(e);
            break;
          }
          const std::string k = std::to_string(index++);
          if (!append_value(&child, k, item, depth + 1)) {
            ok = false;
            break;
          }
        }
        bson_append_array_end(out, &child);
        return ok;
      }
      case ondemand::json_type::string: {
        std::string_view s;
        if (auto e = v.get_string().get(s)) return fail(e);
        if (s.find('\0') != std::string_view::npos)
          return fail("string value of '" + std::string(key) + "' contains a NUL character");
        bson_append_utf8(out, key.data(), klen, s.data(), static_cast<int>(s.size()));
        return true;
      }
      case ondemand::json_type::number: {
        ondemand::number n;
        if (auto e = v.get_number().get(n)) return fail(e);
        switch (n.get_number_type()) {
          case ondemand::number_type::signed_integer:
            bson_append_int64(out, key.data(), klen, n.get_int64());
            return true;
          case ondemand::number_type::unsigned_integer:
            // Above int64's range: BSON has no unsigned type; a double keeps the magnitude.
            bson_append_double(out, key.data(), klen, static_cast<double>(n.get_uint64()));
            return true;
          default:
            bson_append_double(out, key.data(), klen, n.get_double());
            return true;
        }
      }
      case ondemand::json_type::boolean: {
        bool b;
        if (auto e = v.get_bool().get(b)) return fail(e);
        bson_append_bool(out, key.data(), klen, b);
        return true;
      }
      case ondemand::json_type::null: {
        bool is_null = false;
        if (auto e = v.is_null().get(is_null)) return fail(e);
        if (!is_null) return fail("invalid JSON: bad null");
        bson_append_null(out, key.data(), klen);
        return true;
      }
    }
    return fail("invalid JSON");
  }

  bool append_object(bson_t* out, ondemand::object obj, std::size_t depth) {
    for (auto field : obj) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(e);
      if (key.find('\0') != std::string_view::npos) return fail("a key contains a NUL character");
      ondemand::value v;
      if (auto e = field.value().get(v)) return fail(e);
      // simdjson's unescaped key lives in the parser's string buffer until the next key: copy.
      const std::string k(key);
      if (!append_value(out, k, v, depth)) return false;
    }
    return true;
  }
};
}  // namespace

json_to_bson_result json_to_bson(ondemand::parser& parser, std::string& json, std::size_t max_depth) {
  json_to_bson_result r;
  const std::size_t size = json.size();
  if (json.capacity() < size + SIMDJSON_PADDING) json.reserve(size + SIMDJSON_PADDING);
  ondemand::document doc;
  if (auto e = parser.iterate(padded_string_view(json.data(), size, json.capacity())).get(doc)) {
    r.error = std::string("invalid JSON: ") + error_message(e);
    return r;
  }
  ondemand::object obj;
  if (auto e = doc.get_object().get(obj)) {
    r.error = e == INCORRECT_TYPE ? "the JSON is not an object" : std::string("invalid JSON: ") + error_message(e);
    return r;
  }
  converter c{max_depth, {}};
  auto out = make_bson();
  if (!c.append_object(out.get(), obj, 1)) {
    r.error = c.error;
    return r;
  }
  const char* trailing = nullptr;
  if (doc.current_location().get(trailing) == SUCCESS) {
    r.error = "invalid JSON: content after the object";
    return r;
  }
  r.doc = std::move(out);
  return r;
}

}  // namespace dibs::mongo
