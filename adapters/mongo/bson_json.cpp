// Documents as JSON text and back (bson_ptr.hpp): canonical Extended JSON out, any JSON in.
#include "bson_ptr.hpp"

namespace dibs::mongo {

std::string to_json(const bson_t* b) {
  size_t len = 0;
  const bson_string s(bson_as_canonical_extended_json(b, &len));
  return s ? std::string(s.get(), len) : std::string();
}

bson_ptr from_json(const std::string& json) {
  bson_error_t err;
  bson_t* b = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()), static_cast<ssize_t>(json.size()), &err);
  if (!b) throw mongo_error("bad JSON document", err);
  return bson_ptr(b);
}

}  // namespace dibs::mongo
