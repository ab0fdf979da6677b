#include "batch_items.hpp"

namespace dibs::http {

std::optional<batch_item_pointer> batch_item_pointer::parse(const std::string& text, std::string* why) {
  auto refuse = [&](const char* reason) -> std::optional<batch_item_pointer> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (!text.empty() && text.front() != '/') return refuse("a JSON Pointer starts with '/'");
  const auto at = text.find("/{i}");
  if (at == std::string::npos || (at + 4 < text.size() && text[at + 4] != '/'))
    return refuse("it needs {i}, the item's index, as a whole step: /data/{i}/embedding");
  if (text.find("{i}", at + 4) != std::string::npos) return refuse("{i} stands in it more than once");
  batch_item_pointer p;
  p.text_ = text;
  p.array_ = text.substr(0, at);
  p.inside_ = text.substr(at + 4);
  return p;
}

batch_items split_batch_items(simdjson::dom::parser& parser, std::string_view body, const batch_item_pointer& where,
                              std::size_t count) {
  batch_items out;
  simdjson::dom::element doc;
  if (auto e = parser.parse(body.data(), body.size()).get(doc)) {
    out.error = std::string("the batch answer is not valid JSON: ") + simdjson::error_message(e);
    return out;
  }
  simdjson::dom::array elements;
  if (doc.at_pointer(where.array()).get_array().get(elements)) {
    out.error = "the batch answer has no array at '" + (where.array().empty() ? std::string("/") : where.array()) + "'";
    return out;
  }
  if (elements.size() != count) {
    out.out_of_step = true;
    out.error = "the batch answer has " + std::to_string(elements.size()) + " elements for " + std::to_string(count) +
                " items: none is believed";
    return out;
  }
  // Which element is each item's: by its "index" where every element has one, else by place.
  std::vector<simdjson::dom::element> of_item(count);
  std::vector<bool> taken(count, false);
  std::size_t indexed = 0, place = 0;
  for (auto element : elements) {
    std::int64_t index = -1;
    if (element.is_object() && !element["index"].get_int64().get(index)) ++indexed;
    if (indexed > 0 && indexed != place + 1) break;  // some with an index, some without
    const auto item = indexed > 0 ? index : static_cast<std::int64_t>(place);
    if (item < 0 || static_cast<std::size_t>(item) >= count || taken[static_cast<std::size_t>(item)]) {
      out.out_of_step = true;
      out.error = "the batch answer's element " + std::to_string(place) + " has index " + std::to_string(index) +
                  ", not one item's once: none is believed";
      return out;
    }
    taken[static_cast<std::size_t>(item)] = true;
    of_item[static_cast<std::size_t>(item)] = element;
    ++place;
  }
  if (indexed != 0 && indexed != count) {
    out.out_of_step = true;
    out.error = "some elements of the batch answer have an \"index\" and some do not: none is believed";
    return out;
  }
  out.items.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto& item = out.items[i];
    simdjson::dom::element value;
    if (of_item[i].at_pointer(where.inside()).get(value)) {
      item.text = "the batch answer's element for this item has nothing at '" + where.inside() + "'";
      continue;
    }
    item.ok = true;
    item.text = value.is_object() ? simdjson::minify(value) : "{\"value\":" + simdjson::minify(value) + "}";
  }
  return out;
}

}  // namespace dibs::http
