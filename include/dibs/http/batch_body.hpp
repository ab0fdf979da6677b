// A batch request's body of any shape (batch_processor_options::body): a JSON template whose one array holding
// the item's fields is written once per item, comma-separated, the rest as it is:
//   {"model": "text-embedding-3-small", "input": [{text}]}
//   -> {"model": "text-embedding-3-small", "input": ["first text","second text"]}
// The repeated part is the outermost array that holds a field placeholder, so an element may
// be an object of its own ({"requests": [{"content": {"parts": [{"text": {text}}]}}]}: one
// request an item) and ip-api's batch is `[{ip}]`. Every field placeholder must stand in that
// array's one element; the rest reads no field and holds no secret (an API key goes in a header
// or the URL). Pure: tests/unit/test_batch_body.cpp.
#pragma once

#include <dibs/http/field_template.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

class batch_body {
 public:
  batch_body() = default;
  // Throws std::invalid_argument naming `setting` with what is wrong (no array holds a field,
  // a field outside it, more than one element in it, not JSON once filled).
  static batch_body parse(const std::string& text, const std::string& setting);

  bool empty() const { return element_.empty(); }
  // The element for one item (its error when a field can't be written: that item fails alone).
  field_template::expansion element(const job& j, std::size_t max_value_bytes = 0) const {
    return element_.expand(j, max_value_bytes);
  }
  const field_template& element_template() const { return element_; }
  // The body carrying `elements` (each an element() text), in order.
  std::string join(const std::vector<std::string_view>& elements) const;
  std::string join(const std::vector<std::string>& elements) const {
    return join(std::vector<std::string_view>(elements.begin(), elements.end()));
  }
  // The bytes join() adds to the elements' own.
  std::size_t fixed_bytes() const { return head_.size() + tail_.size(); }

 private:
  std::string head_, tail_;  // up to and including the array's '[', from its ']' on
  field_template element_;
};

}  // namespace dibs::http
