// Owning handles for libbson/libmongoc objects, and the few BSON helpers every file needs.
#pragma once

#include <bson/bson.h>
#include <mongoc/mongoc.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace dibs::mongo {

struct bson_deleter {
  void operator()(bson_t* b) const { bson_destroy(b); }
};
using bson_ptr = std::unique_ptr<bson_t, bson_deleter>;

inline bson_ptr make_bson() { return bson_ptr(bson_new()); }

// A string libbson allocated (extended JSON), freed with bson_free.
struct bson_string_deleter {
  void operator()(char* s) const { bson_free(s); }
};
using bson_string = std::unique_ptr<char, bson_string_deleter>;

// Canonical extended JSON of `b`, for tests, logs and error messages.
std::string to_json(const bson_t* b);

// Builds a document from relaxed extended JSON (tests, fixed command documents). Throws.
bson_ptr from_json(const std::string& json);

// The driver's message of `e`, withheld when it quotes a secret of a connection string
// (driver_log.hpp: scrub_driver_message).
std::string driver_error_text(const bson_error_t& e);

// Thrown for a failed driver call; says which operation failed and the driver's message.
class mongo_error : public std::runtime_error {
 public:
  mongo_error(const std::string& what_failed, const bson_error_t& e)
      : std::runtime_error(what_failed + ": " + driver_error_text(e)), code(e.code), domain(e.domain) {}
  explicit mongo_error(const std::string& what) : std::runtime_error(what) {}
  uint32_t code = 0;
  uint32_t domain = 0;
};

}  // namespace dibs::mongo
