// RFC 6901 JSON Pointers: "/loc/lat", "/tags/0", "/a~1b" (the member "a/b"), "" (the whole
// document). Parsed once, when a setting names one; evaluated on each answer
// (adapters/http/processor/json_pointer_eval.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dibs::http {

class json_pointer {
 public:
  // nullopt, with `why` set, when `text` is no JSON Pointer: not empty and not starting with
  // '/', or a '~' not followed by 0 or 1.
  static std::optional<json_pointer> parse(const std::string& text, std::string* why = nullptr);

  const std::string& text() const { return text_; }
  // The reference tokens, unescaped (~1 is '/', ~0 is '~').
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::string text_;
  std::vector<std::string> tokens_;
};

// A token as an array index: digits without a leading zero ("0", "12"); nullopt otherwise ("-"
// names the element after the last one, which never exists in an answer).
std::optional<std::size_t> array_index(const std::string& token);

}  // namespace dibs::http
