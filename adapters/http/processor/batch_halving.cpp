#include "batch_halving.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace dibs::http {

std::optional<std::size_t> rows_cap_in_words(std::string_view why, std::size_t rows) {
  std::string text(why);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  constexpr std::array<std::string_view, 4> cap_words{"max", "limit", "at most", "up to"};
  constexpr std::array<std::string_view, 6> not_rows{"token", "char", "byte", "kb", "mb", "second"};
  constexpr std::size_t before = 40;  // how far back the cap's word may stand
  std::optional<std::size_t> cap;
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.'))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    std::size_t n = 0;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && n < 1'000'000'000) n = n * 10 + static_cast<std::size_t>(text[end++] - '0');
    const auto ahead = std::string_view(text).substr(i > before ? i - before : 0, i > before ? before : i);
    auto after = std::string_view(text).substr(end);
    after.remove_prefix(std::min(after.find_first_not_of(' '), after.size()));
    const bool capped = std::any_of(cap_words.begin(), cap_words.end(), [&](auto w) { return ahead.find(w) != std::string_view::npos; });
    const bool counts_other = std::any_of(not_rows.begin(), not_rows.end(), [&](auto w) { return after.substr(0, w.size()) == w; });
    const bool fraction = end < text.size() && text[end] == '.' && end + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[end + 1]));
    if (capped && !counts_other && !fraction && n >= 1 && n < rows) cap = cap ? std::min(*cap, n) : n;
    i = end;
  }
  return cap;
}

}  // namespace dibs::http
