#include "batch_items.hpp"

#include "engine/src/json_text.hpp"

namespace dibs::http {

namespace {
// The key an element says it answers (a string's text, else its JSON); nullopt when it says none.
std::optional<std::string> echoed_key(simdjson::dom::element element, const std::string& member) {
  simdjson::dom::element named;
  if (member.empty() || !element.is_object() || element.get_object()[member].get(named)) return std::nullopt;
  std::string_view text;
  if (!named.get_string().get(text)) return std::string(text);
  return simdjson::minify(named);
}

// The text of a value as the API wrote it (an object's or array's whole, a scalar's token).
std::optional<std::string_view> raw_text(simdjson::ondemand::value v) {
  simdjson::ondemand::json_type type;
  if (v.type().get(type)) return std::nullopt;
  std::string_view raw;
  if (type == simdjson::ondemand::json_type::object) {
    simdjson::ondemand::object o;
    if (v.get_object().get(o) || o.raw_json().get(raw)) return std::nullopt;
  } else if (type == simdjson::ondemand::json_type::array) {
    simdjson::ondemand::array a;
    if (v.get_array().get(a) || a.raw_json().get(raw)) return std::nullopt;
  } else {
    raw = v.raw_json_token();
  }
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) raw.remove_suffix(1);
  return raw;
}

// The value at `inside` of each element of the array at `array`, as the API wrote it, in order:
// one on-demand pass over the answer (the DOM checked it first). It stops at the first step that
// fails (an element without the value, a key the answer spells with an escape): from there on
// the DOM's text stands.
std::vector<std::string_view> texts_inside(const simdjson::padded_string& body, const std::string& array,
                                           const std::string& inside) {
  thread_local simdjson::ondemand::parser parser;
  std::vector<std::string_view> out;
  simdjson::ondemand::document doc;
  simdjson::ondemand::array elements;
  if (parser.iterate(body).get(doc)) return out;
  if (array.empty() ? doc.get_array().get(elements) : doc.at_pointer(array).get_array().get(elements)) return out;
  for (auto element : elements) {
    simdjson::ondemand::value v;
    std::optional<std::string_view> raw;
    if (element.get(v) || (!inside.empty() && v.at_pointer(inside).get(v)) || !(raw = raw_text(v))) break;
    out.push_back(*raw);
  }
  return out;
}
}  // namespace

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

std::string echo_key(const job_field* field) {
  if (!field) return {};
  return field->st == job_field::state::string ? field->value : field->json;
}

batch_items split_batch_items(simdjson::dom::parser& parser, std::string_view body, const batch_item_pointer& where,
                              std::size_t count, const batch_echo& echo) {
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
  std::vector<std::size_t> place_of(count);
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
    place_of[static_cast<std::size_t>(item)] = place;
    ++place;
  }
  if (indexed != 0 && indexed != count) {
    out.out_of_step = true;
    out.error = "some elements of the batch answer have an \"index\" and some do not: none is believed";
    return out;
  }
  // The answers as the API wrote them: the DOM's numbers would be written back in its own way.
  // (The on-demand walk compares keys as written: a pointer step the answer spells with an escape,
  // "embe\u0064ding", is found by the DOM alone, whose text then stands for that element on.)
  const simdjson::padded_string padded(body);
  const auto texts = texts_inside(padded, where.array(), where.inside());
  out.items.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto& item = out.items[i];
    if (!echo.member.empty() && !of_item[i].is_object()) {  // it can't say whose it is
      item.text = "the batch answer's element for this item is not a JSON object";
      continue;
    }
    if (const auto named = echoed_key(of_item[i], echo.member); named && echo.keys && *named != (*echo.keys)[i]) {
      item.text = "the batch answer in the place of '" + (*echo.keys)[i] + "' is for '" + *named + "'";
      out.out_of_step = true;  // its connection may be one answer behind (client::drop_idle)
      continue;
    }
    simdjson::dom::element value;
    std::optional<std::string> text;
    if (of_item[i].at_pointer(where.inside()).get(value)) {
      item.text = "the batch answer's element for this item has nothing at '" + where.inside() + "'";
      continue;
    }
    if (place_of[i] < texts.size()) {
      text = std::string(texts[place_of[i]]);
      compact_json_in_place(*text);  // on one line
    } else {
      text = simdjson::minify(value);
    }
    item.ok = true;
    item.text = value.is_object() ? std::move(*text) : "{\"value\":" + *text + "}";
  }
  return out;
}

}  // namespace dibs::http
