#include "bson_read.hpp"

#include "engine/src/json_text.hpp"

namespace dibs::mongo {

std::int64_t reply_int(const bson_t* reply, const char* key) {
  bson_iter_t it;
  if (bson_iter_init_find(&it, reply, key) && BSON_ITER_HOLDS_NUMBER(&it)) return bson_iter_as_int64(&it);
  return 0;
}

const char* type_name(bson_type_t t) {
  switch (t) {
    case BSON_TYPE_DOUBLE: return "double";
    case BSON_TYPE_UTF8: return "string";
    case BSON_TYPE_DOCUMENT: return "object";
    case BSON_TYPE_ARRAY: return "array";
    case BSON_TYPE_BINARY: return "binary";
    case BSON_TYPE_OID: return "objectId";
    case BSON_TYPE_BOOL: return "bool";
    case BSON_TYPE_DATE_TIME: return "date";
    case BSON_TYPE_NULL: return "null";
    case BSON_TYPE_INT32: return "int32";
    case BSON_TYPE_INT64: return "int64";
    case BSON_TYPE_DECIMAL128: return "decimal";
    case BSON_TYPE_TIMESTAMP: return "timestamp";
    case BSON_TYPE_REGEX: return "regex";
    default: return "another BSON type";
  }
}

std::optional<owned_id> doc_id(const bson_t* doc) {
  bson_iter_t it;
  if (!bson_iter_init_find(&it, doc, "_id")) return std::nullopt;
  return owned_id(*bson_iter_value(&it));
}

namespace {
// A value as relaxed Extended JSON (a number, a boolean, a document or array as JSON): what a
// request body copies; "" for null and the types JSON has no plain form of (ObjectId, dates...).
std::string value_json(const bson_iter_t* it) {
  switch (bson_iter_type(it)) {
    case BSON_TYPE_INT32: return std::to_string(bson_iter_int32(it));
    case BSON_TYPE_INT64: return std::to_string(bson_iter_int64(it));
    case BSON_TYPE_BOOL: return bson_iter_bool(it) ? "true" : "false";
    case BSON_TYPE_DOUBLE:
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
      // Wrapped in a document to use the driver's JSON writer, then unwrapped: {"v" : X}.
      bson_t wrap = BSON_INITIALIZER;
      bson_append_iter(&wrap, "v", 1, it);
      char* text = bson_as_relaxed_extended_json(&wrap, nullptr);
      bson_destroy(&wrap);
      if (!text) return {};
      std::string s(text);
      bson_free(text);
      const auto colon = s.find(':');
      const auto close = s.rfind('}');
      if (colon == std::string::npos || close == std::string::npos || close <= colon) return {};
      s = s.substr(colon + 1, close - colon - 1);
      while (!s.empty() && s.front() == ' ') s.erase(s.begin());
      while (!s.empty() && s.back() == ' ') s.pop_back();
      // A double that is no JSON number (NaN, Infinity) comes as {"$numberDouble": ...}: none.
      if (s.find("$number") != std::string::npos && bson_iter_type(it) == BSON_TYPE_DOUBLE) return {};
      return compact_json(s);  // the driver writes { "a" : [ 1, 2 ] }
    }
    default: return {};
  }
}
}  // namespace

job_field read_field(const bson_t* doc, const std::string& path) {
  job_field f;
  f.name = path;
  bson_iter_t it, child;
  if (!bson_iter_init(&it, doc) || !bson_iter_find_descendant(&it, path.c_str(), &child)) {
    f.st = job_field::state::missing;
    return f;
  }
  if (BSON_ITER_HOLDS_UTF8(&child)) {
    uint32_t len = 0;
    const char* s = bson_iter_utf8(&child, &len);
    f.st = job_field::state::string;
    f.value.assign(s, len);
  } else {
    f.st = job_field::state::not_string;
    f.type_name = type_name(bson_iter_type(&child));
    f.json = value_json(&child);
  }
  return f;
}

int read_int(const bson_t* doc, const std::string& path, int fallback) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path.c_str(), &child) &&
      BSON_ITER_HOLDS_NUMBER(&child))
    return static_cast<int>(bson_iter_as_int64(&child));
  return fallback;
}

bool has_path(const bson_t* doc, const std::string& path, bool non_null) {
  bson_iter_t it, child;
  if (!bson_iter_init(&it, doc) || !bson_iter_find_descendant(&it, path.c_str(), &child)) return false;
  return !non_null || !BSON_ITER_HOLDS_NULL(&child);
}

std::optional<std::int64_t> read_i64(const bson_t* doc, const std::string& path) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path.c_str(), &child) &&
      BSON_ITER_HOLDS_NUMBER(&child))
    return bson_iter_as_int64(&child);
  return std::nullopt;
}

std::string read_str(const bson_t* doc, const std::string& path) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path.c_str(), &child) &&
      BSON_ITER_HOLDS_UTF8(&child))
    return bson_iter_utf8(&child, nullptr);
  return {};
}

}  // namespace dibs::mongo
