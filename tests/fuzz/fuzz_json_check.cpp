// The API body check against simdjson's DOM parser (differential): every body the on-demand
// check accepts must be one JSON object by the DOM parser too; the batch splitter on the same
// bytes must neither crash nor accept what is not an array.
#include "adapters/http/processor/batch_answer.hpp"
#include "adapters/http/processor/json_check.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::ondemand::parser check, outer, inner;
  static simdjson::dom::parser dom;
  std::string body(reinterpret_cast<const char*>(data), size);
  const auto r = dibs::http::check_json_object(check, body);
  simdjson::dom::element doc;
  const bool dom_object = !dom.parse(body.data(), body.size()).get(doc) && doc.is_object();
  if (r.ok && !dom_object) std::abort();  // accepted something that is not one JSON object

  const std::vector<std::string> keys{"1.2.3.4", "8.8.8.8"};
  const auto split = dibs::http::split_batch_answer(outer, inner, body, keys, true);
  if (split.error.empty()) {
    if (split.items.size() != keys.size()) std::abort();
    if (dom.parse(body.data(), body.size()).get(doc) || !doc.is_array()) std::abort();
  }
  return 0;
}
