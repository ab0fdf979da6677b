// File mode's output line: whatever the input line, with_field either refuses it (not one JSON
// object) or returns one valid JSON object that holds the target with the given value.
#include <adapters/jsonl/json_members.hpp>

#include <simdjson.h>

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::dom::parser dom;
  const std::string line(reinterpret_cast<const char*>(data), size);
  const auto out = dibs::jsonl::with_field(line, "location", "{\"c\":1}");
  if (out.empty()) return 0;
  simdjson::dom::element doc;
  if (dom.parse(out).get(doc) || !doc.is_object()) std::abort();
  std::int64_t c = 0;
  if (doc["location"]["c"].get_int64().get(c) || c != 1) std::abort();
  return 0;
}
