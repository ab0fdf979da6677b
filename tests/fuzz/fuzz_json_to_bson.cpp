// JSON -> BSON for MongoDB: no crash on any input; what converts is valid BSON (valid UTF-8, no
// NUL in keys or strings), and every refusal says why. (Empty keys are valid: MongoDB takes them.)
#include <adapters/mongo/json_to_bson.hpp>

#include <bson/bson.h>

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::ondemand::parser parser;
  std::string json(reinterpret_cast<const char*>(data), size);
  auto r = dibs::mongo::json_to_bson(parser, json);
  if (!r.doc) {
    if (r.error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  std::size_t offset = 0;
  if (!bson_validate(r.doc.get(), BSON_VALIDATE_UTF8, &offset)) std::abort();
  return 0;
}
