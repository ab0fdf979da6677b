#include "bson_parts.hpp"

#include <chrono>

namespace dibs::mongo {

std::int64_t ms(store_time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
void append_i64(bson_t* b, const std::string& key, std::uint64_t v) {
  BSON_APPEND_INT64(b, key.c_str(), static_cast<std::int64_t>(v));  // tokens are random bits
}
void append_in(bson_t* parent, const char* key, const std::vector<bson_value_t>& ids) {
  bson_t cond, arr;
  BSON_APPEND_DOCUMENT_BEGIN(parent, key, &cond);
  BSON_APPEND_ARRAY_BEGIN(&cond, "$in", &arr);
  char buf[16];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const char* k;
    bson_uint32_to_string(static_cast<uint32_t>(i), &k, buf, sizeof buf);
    bson_append_value(&arr, k, -1, &ids[i]);
  }
  bson_append_array_end(&cond, &arr);
  bson_append_document_end(parent, &cond);
}
// {$or: [{<lock>: {$exists: false}}, {<lock>: {$type: "object"}}]}: the lease field is absent or
// a document (dibs's own shape). Anything else there (false, a string, a number, null, an array)
// is a value dibs did not write: such a document is never claimed nor written (docs/stores.md).
void append_lease_field_ours(bson_t* b, const char* key, const field_names& f) {
  bson_t ors, absent, absent_c, object, object_c;
  BSON_APPEND_ARRAY_BEGIN(b, key, &ors);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "0", &absent);
  BSON_APPEND_DOCUMENT_BEGIN(&absent, f.lock.c_str(), &absent_c);
  BSON_APPEND_BOOL(&absent_c, "$exists", false);
  bson_append_document_end(&absent, &absent_c);
  bson_append_document_end(&ors, &absent);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "1", &object);
  BSON_APPEND_DOCUMENT_BEGIN(&object, f.lock.c_str(), &object_c);
  BSON_APPEND_UTF8(&object_c, "$type", "object");
  bson_append_document_end(&object, &object_c);
  bson_append_document_end(&ors, &object);
  bson_append_array_end(b, &ors);
}

void append_exists(bson_t* b, const std::string& key, bool exists) {
  bson_t c;
  BSON_APPEND_DOCUMENT_BEGIN(b, key.c_str(), &c);
  BSON_APPEND_BOOL(&c, "$exists", exists);
  bson_append_document_end(b, &c);
}

}  // namespace dibs::mongo
