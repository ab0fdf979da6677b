// Document ids as text for the engine's job.id, and back. ObjectIds are their 24 hex digits;
// other types carry a prefix: "i32:7", "i64:7", "str:abc", or "ext:" + canonical extended JSON.
#pragma once

#include <bson/bson.h>

#include <optional>
#include <string>

namespace dibs::mongo {

std::string id_to_text(const bson_value_t& id);

// A parsed id that owns its memory.
class owned_id {
 public:
  owned_id() { value_.value_type = BSON_TYPE_EOD; }
  explicit owned_id(const bson_value_t& v) { bson_value_copy(&v, &value_); }
  owned_id(const owned_id& o) { bson_value_copy(&o.value_, &value_); }
  owned_id& operator=(const owned_id& o) {
    if (this != &o) {
      bson_value_destroy(&value_);
      bson_value_copy(&o.value_, &value_);
    }
    return *this;
  }
  ~owned_id() { bson_value_destroy(&value_); }
  const bson_value_t& value() const { return value_; }

 private:
  bson_value_t value_{};
};

std::optional<owned_id> id_from_text(const std::string& text);

}  // namespace dibs::mongo
