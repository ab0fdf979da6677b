// The API body check against simdjson's DOM parser (differential): every body the on-demand
// check accepts must be one JSON object by the DOM parser too; the batch splitter (ip-api's
// shape: "/{i}", keys echoed in "query") on the same bytes must neither crash nor give an item
// an answer unless the body is an array of one element an item.
#include "adapters/http/processor/batch_items.hpp"
#include "adapters/http/processor/json_check.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static simdjson::ondemand::parser check;
  static simdjson::dom::parser dom;
  std::string body(reinterpret_cast<const char*>(data), size);
  const auto r = dibs::http::check_json_object(check, body);
  simdjson::dom::element doc;
  const bool dom_object = !dom.parse(body.data(), body.size()).get(doc) && doc.is_object();
  if (r.ok && !dom_object) std::abort();  // accepted something that is not one JSON object

  static const auto where = *dibs::http::batch_item_pointer::parse("/{i}");
  const std::vector<std::string> keys{"1.2.3.4", "8.8.8.8"};
  static simdjson::dom::parser splitter;
  const auto split = dibs::http::split_batch_items(splitter, body, where, keys.size(), {"query", &keys});
  if (split.error.empty()) {
    if (split.items.size() != keys.size()) std::abort();
    if (dom.parse(body.data(), body.size()).get(doc) || !doc.is_array() || doc.get_array().size() != keys.size()) std::abort();
  }
  return 0;
}
