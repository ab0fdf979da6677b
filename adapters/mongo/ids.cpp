#include "ids.hpp"

#include "bson_ptr.hpp"

#include <cstring>

namespace dibs::mongo {

std::string id_to_text(const bson_value_t& id) {
  switch (id.value_type) {
    case BSON_TYPE_OID: {
      char hex[25];
      bson_oid_to_string(&id.value.v_oid, hex);
      return hex;
    }
    case BSON_TYPE_INT32:
      return "i32:" + std::to_string(id.value.v_int32);
    case BSON_TYPE_INT64:
      return "i64:" + std::to_string(id.value.v_int64);
    case BSON_TYPE_UTF8:
      return "str:" + std::string(id.value.v_utf8.str, id.value.v_utf8.len);
    default: {
      auto doc = make_bson();
      bson_append_value(doc.get(), "v", 1, &id);
      size_t len = 0;
      const bson_string json(bson_as_canonical_extended_json(doc.get(), &len));
      return "ext:" + std::string(json.get(), len);
    }
  }
}

std::optional<owned_id> id_from_text(const std::string& text) {
  bson_value_t v{};
  if (text.size() == 24 && bson_oid_is_valid(text.c_str(), 24)) {
    v.value_type = BSON_TYPE_OID;
    bson_oid_init_from_string(&v.value.v_oid, text.c_str());
    return owned_id(v);
  }
  auto rest = [&](const char* prefix) -> std::optional<std::string> {
    const auto n = std::strlen(prefix);
    if (text.compare(0, n, prefix) == 0) return text.substr(n);
    return std::nullopt;
  };
  try {
    if (auto r = rest("i32:")) {
      v.value_type = BSON_TYPE_INT32;
      v.value.v_int32 = std::stoi(*r);
      return owned_id(v);
    }
    if (auto r = rest("i64:")) {
      v.value_type = BSON_TYPE_INT64;
      v.value.v_int64 = std::stoll(*r);
      return owned_id(v);
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (auto r = rest("str:")) {
    v.value_type = BSON_TYPE_UTF8;
    v.value.v_utf8.str = r->data();
    v.value.v_utf8.len = static_cast<uint32_t>(r->size());
    return owned_id(v);  // copies the string
  }
  if (auto r = rest("ext:")) {
    bson_error_t err;
    const bson_ptr doc(bson_new_from_json(reinterpret_cast<const uint8_t*>(r->data()), static_cast<ssize_t>(r->size()), &err));
    if (!doc) return std::nullopt;
    bson_iter_t it;
    std::optional<owned_id> out;
    if (bson_iter_init_find(&it, doc.get(), "v")) out.emplace(*bson_iter_value(&it));
    return out;
  }
  return std::nullopt;
}

}  // namespace dibs::mongo
