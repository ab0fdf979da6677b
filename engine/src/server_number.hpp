// A number a database sent as text (a count, an age, a time in microseconds), read without the
// standard library's parsing functions, whose errors name themselves ("stoll") instead of saying
// what was wrong: a value that is not such a number throws a runtime_error that says which.
#pragma once

#include <charconv>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace dibs {

// NULL (nullopt) is `if_null`.
template <class Number>
Number server_number(const std::optional<std::string>& text, const char* store, Number if_null = 0) {
  if (!text) return if_null;
  Number v{};
  const auto* end = text->data() + text->size();
  const auto [p, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || p != end)
    throw std::runtime_error(std::string(store) + " answered '" + text->substr(0, 40) + "' where dibs expected a number");
  return v;
}

}  // namespace dibs
