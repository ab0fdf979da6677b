// A batch answer split back into its items' answers (batch_processor_options::item), never shifted: where item
// i's answer stands is a JSON Pointer with `{i}` for its index ("/data/{i}/embedding": OpenAI's
// embeddings; "/{i}": an array of answers, as ip-api's), and
//   - the array at `{i}`'s place must have exactly one element an item, or none is believed (an
//     answer with a vector missing would put every later vector on the wrong row);
//   - where its elements carry an "index" member (OpenAI's, Voyage's), each item takes the
//     element whose index is its own, and the indexes must be each item's once;
//   - where the elements echo their item's key in a member (batch_echo: ip-api's "query"), an
//     element naming another key is not that item's (retried), and the answer may be another
//     request's (out_of_step); an element without the member is taken by its place, one that
//     is not an object is no item's;
//   - an item's answer is the value at the pointer, kept as the API wrote it (its bytes, on one
//     line: a number is never written back in another form); a
//     value that is not an object (a vector) is kept as {"value": ...}, as a store keeps an
//     answer as an object.
// Pure: tests/unit/test_batch_items.cpp.
#pragma once

#include <dibs/job.hpp>

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

class batch_item_pointer {
 public:
  // nullopt, with `why`, when `text` is no JSON Pointer holding `{i}` once as a whole token.
  static std::optional<batch_item_pointer> parse(const std::string& text, std::string* why = nullptr);
  const std::string& text() const { return text_; }
  const std::string& array() const { return array_; }    // the pointer to the items' array
  const std::string& inside() const { return inside_; }  // from an element to its item's answer

 private:
  std::string text_, array_, inside_;
};

struct batch_item_answer {
  bool ok = false;
  std::string text;  // ok: the item's answer (a JSON object, one line); else why it has none
};

struct batch_items {
  std::string error;  // the answer as a whole can't be split (every item retries)
  bool out_of_step = false;  // the wrong number of elements, or indexes not each item's once
  std::vector<batch_item_answer> items;  // one an item, when `error` is empty
};

// An item's key as an answer names it: a string's text, any other value's JSON ("" when the
// store gives no JSON for it, or the field is missing).
std::string echo_key(const job_field* field);

// The member of each element that names its item's key, and the items' keys in order.
struct batch_echo {
  std::string member;  // empty: nothing is checked
  const std::vector<std::string>* keys = nullptr;  // one an item
};

batch_items split_batch_items(simdjson::dom::parser& parser, std::string_view body, const batch_item_pointer& where,
                              std::size_t count, const batch_echo& echo = {});

}  // namespace dibs::http
